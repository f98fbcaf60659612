/**
 * A/B compare: two selectors (inference backend × model version) over the same window, as Grafana panels on the
 * data source: statistics side by side (B's change against A; a side estimated from sampled traces marked as such),
 * the latency distributions overlaid on the proxy's
 * shared bins (a histogram), P50/P99 over time, and the jitter hot zones (buckets where P99/P50 jumps) as a state
 * timeline per side. The selectors are URL keys `a` and `b`, so a comparison is a link.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Button, Field, Input, Select, useStyles2 } from '@grafana/ui';
import React, { useState } from 'react';

import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import { formatSelector, HOT, parseSelector, STEADY } from '../../datasource/frames/compare';
import { hopscopeQuery, partRefId } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { testIds } from '../../testIds';

interface CompareState extends SceneObjectState {
  a: string;
  b: string;
  body: SceneObject;
}

const DEFAULT_A = 'backend=vllm';
const DEFAULT_B = 'backend=tgi';
const COMPARE = 'compare';

function compareBody(runner: SceneQueryRunner): SceneObject {
  const stats = hopscopePanel(
    PanelBuilders.table()
      .setTitle('Side by side')
      .setDescription(
        'Each side’s statistics and B’s change against A; a side counted from a sample of traces is marked "estimated", the Source column says how each row was obtained.'
      )
      .setData(partOf(partRefId(COMPARE, 'stats')))
      .setOption('cellHeight', 'sm' as never),
    { key: 'compare-stats' }
  );
  const histogram = hopscopePanel(
    PanelBuilders.histogram()
      .setTitle('Latency distribution')
      .setDescription(
        'Requests of each side on the same bins (log-spaced): a shift right is slower, a longer tail is jitter.'
      )
      .setData(partOf(partRefId(COMPARE, 'histogram'))),
    { key: 'compare-histogram' }
  );
  const latency = hopscopePanel(
    PanelBuilders.timeseries()
      .setTitle('P50 / P99 over time')
      .setDescription('P99 solid, P50 dashed, per time bucket of the window.')
      .setData(partOf(partRefId(COMPARE, 'latency')))
      .setUnit('ms')
      .setCustomFieldConfig('fillOpacity', 6)
      .setCustomFieldConfig('spanNulls', false),
    { key: 'compare-latency' }
  );
  const hot = hopscopePanel(
    PanelBuilders.statetimeline()
      .setTitle('Jitter hot zones')
      .setDescription('Buckets where P99/P50 jumps against the side’s own median ratio.')
      .setData(partOf(partRefId(COMPARE, 'hotZones')))
      .setMappings([
        {
          type: 'value' as never,
          options: {
            [HOT]: { color: 'red', text: 'hot zone', index: 0 },
            [STEADY]: { color: 'green', text: 'steady', index: 1 },
          },
        },
      ])
      .setOption('showValue', 'never' as never),
    { key: 'compare-hot-zones' }
  );
  return new SceneFlexLayout({
    direction: 'column',
    $data: runner,
    children: [
      // The statistics full width (six rows and where they come from), then the two distributions side by side.
      new SceneFlexItem({ height: 320, body: stats }),
      new SceneFlexLayout({
        direction: 'row',
        height: 280,
        children: [new SceneFlexItem({ width: '45%', body: histogram }), new SceneFlexItem({ body: latency })],
      }),
      new SceneFlexItem({ height: 150, body: hot }),
    ],
  });
}

export class CompareScene extends SceneObjectBase<CompareState> {
  static Component = CompareRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.compare] });
  private readonly runner: SceneQueryRunner;

  constructor(state: Partial<Pick<CompareState, 'a' | 'b'>> = {}) {
    const a = state.a ?? DEFAULT_A;
    const b = state.b ?? DEFAULT_B;
    const runner = hopscopeRunner(hopscopeQuery(COMPARE, { a, b }));
    super({ a, b, body: compareBody(runner) });
    this.runner = runner;
  }

  public getUrlState(): SceneObjectUrlValues {
    return { a: this.state.a, b: this.state.b };
  }

  /** Scenes passes only the keys that changed. */
  public updateFromUrl(values: SceneObjectUrlValues): void {
    const a = typeof values.a === 'string' && values.a ? values.a : this.state.a;
    const b = typeof values.b === 'string' && values.b ? values.b : this.state.b;
    if (a !== this.state.a || b !== this.state.b) {
      this.setSides(a, b);
    }
  }

  public setSides(a: string, b: string): void {
    this.setState({ a, b });
    this.runner.setState({ queries: [hopscopeQuery(COMPARE, { a, b })] });
    if (this.runner.isActive) {
      this.runner.runQueries();
    }
  }
}

function SideEditor({
  label,
  value,
  onChange,
  testId,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  testId: string;
}) {
  const s = parseSelector(value);
  return (
    <div data-testid={testId} style={{ display: 'flex', gap: 8, alignItems: 'flex-end' }}>
      <Field label={`${label}: backend`}>
        <Select
          width={14}
          options={[
            { label: 'any', value: '' },
            { label: 'vLLM', value: 'vllm' },
            { label: 'TGI', value: 'tgi' },
            { label: 'SGLang', value: 'sglang' },
          ]}
          value={s.backend ?? ''}
          onChange={(o) => onChange(formatSelector({ ...s, backend: o.value || undefined }))}
          aria-label={`${label} backend`}
        />
      </Field>
      <Field label={`${label}: model version`}>
        <Input
          width={24}
          value={s.model ?? ''}
          placeholder="any"
          onChange={(e) => onChange(formatSelector({ ...s, model: e.currentTarget.value || undefined }))}
          aria-label={`${label} model`}
        />
      </Field>
    </div>
  );
}

function CompareRenderer({ model }: SceneComponentProps<CompareScene>) {
  const { a, b, body } = model.useState();
  const styles = useStyles2(getStyles);
  const [da, setA] = useState(a);
  const [db, setB] = useState(b);
  return (
    <div className={styles.page}>
      <form
        className={styles.form}
        onSubmit={(e) => {
          e.preventDefault();
          model.setSides(da || DEFAULT_A, db || DEFAULT_B);
        }}
      >
        <SideEditor label="A" value={da} onChange={setA} testId={testIds.compare.selectorA} />
        <SideEditor label="B" value={db} onChange={setB} testId={testIds.compare.selectorB} />
        <Button type="submit" icon="exchange-alt" data-testid={testIds.compare.apply}>
          Compare
        </Button>
      </form>
      <body.Component model={body} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  form: css({ display: 'flex', gap: theme.spacing(2), alignItems: 'flex-end', flexWrap: 'wrap' }),
});
