/**
 * The Overview's insights: threshold hints computed from the same answers the panels draw (the golden query's
 * combined series and the heatmap's rows), shown as dismissible notes above the panels. Never hard-coded answers:
 * see transforms/insights.ts for the rules.
 */
import { css } from '@emotion/css';
import { dateTime, FieldType, type DataFrame, type GrafanaTheme2 } from '@grafana/data';
import {
  SceneObjectBase,
  sceneGraph,
  type SceneComponentProps,
  type SceneObjectRef,
  type SceneObjectState,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Alert, useStyles2 } from '@grafana/ui';
import React, { useMemo } from 'react';

import type { GoldenMetric } from '../../../contract';
import { combinedRefId } from '../../datasource/frames/golden';
import { testIds } from '../../testIds';
import { insightInput, meanAcross, type TimesValues } from '../../transforms/golden';
import { computeInsights } from '../../transforms/insights';

interface InsightsState extends SceneObjectState {
  /** The heatmap's runner (its GPUs' mean activity is one of the inputs). */
  heatmap: SceneObjectRef<SceneQueryRunner>;
  dismissed: string[];
}

export class InsightsScene extends SceneObjectBase<InsightsState> {
  static Component = InsightsRenderer;

  constructor(state: Omit<InsightsState, 'dismissed'> & { dismissed?: string[] }) {
    super({ dismissed: [], ...state });
  }

  dismiss(id: string): void {
    this.setState({ dismissed: [...this.state.dismissed, id] });
  }
}

const timeOf = (f: DataFrame | undefined): number[] =>
  (f?.fields.find((x) => x.type === FieldType.time)?.values ?? []) as number[];

function combined(frames: DataFrame[], metric: GoldenMetric): TimesValues | undefined {
  const f = frames.find((x) => x.refId === combinedRefId('golden', metric));
  const v = f?.fields.find((x) => x.type === FieldType.number);
  return f && v ? { times: timeOf(f), values: v.values as Array<number | null> } : undefined;
}

function InsightsRenderer({ model }: SceneComponentProps<InsightsScene>) {
  const { dismissed, heatmap } = model.useState();
  const styles = useStyles2(getStyles);
  const golden = sceneGraph.getData(model).useState().data;
  const heat = heatmap.resolve().useState().data;
  const insights = useMemo(() => {
    const frames = golden?.series ?? [];
    const rps = combined(frames, 'rps');
    if (!rps && !combined(frames, 'e2e_p99_s')) {
      return [];
    }
    const h = heat?.series[0];
    const gpu = h
      ? meanAcross(
          timeOf(h),
          h.fields.filter((x) => x.type === FieldType.number).map((x) => x.values as Array<number | null>)
        )
      : undefined;
    const step = (t: number[]) => (t.length > 1 ? t[1] - t[0] : 0);
    const input = insightInput(
      { rps, tokens: combined(frames, 'output_tokens_per_s'), p99: combined(frames, 'e2e_p99_s'), gpu },
      Math.max(step(rps?.times ?? []), step(gpu?.times ?? []))
    );
    return computeInsights(input);
  }, [golden, heat]);
  const shown = insights.filter((i) => !dismissed.includes(i.id));
  if (!shown.length) {
    return null;
  }
  return (
    <div className={styles.list}>
      {shown.map((i) => (
        <div key={i.id} data-testid={testIds.overview.insight(i.id)}>
          <Alert
            severity="info"
            title={i.title}
            onRemove={() => model.dismiss(i.id)}
            buttonContent={<span data-testid={testIds.overview.insightDismiss(i.id)}>Dismiss</span>}
          >
            {i.detail} Last seen {dateTime(i.atMs).format('HH:mm:ss')}.
          </Alert>
        </div>
      ))}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  list: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1) }),
});
