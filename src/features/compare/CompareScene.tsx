/**
 * A/B compare: two selectors (inference backend × model version) over the same window: latency distributions
 * overlaid on shared bins, P50/P99/TTFT side by side, and P99 over time with the jitter hot zones (time buckets where
 * P99/P50 jumps) shaded. The selectors are URL keys `a` and `b`, so a comparison is a link.
 */
import { css } from '@emotion/css';
import { sceneGraph, SceneObjectUrlSyncConfig, type SceneComponentProps, type SceneObjectUrlValues } from '@grafana/scenes';
import type { DataFrame, FieldType, GrafanaTheme2 } from '@grafana/data';
import { Button, Field, Input, Select, useStyles2 } from '@grafana/ui';
import React, { useMemo, useState } from 'react';

import type { CompareAnswer } from '../../../contract';
import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import { api } from '../../api/client';
import { testIds } from '../../testIds';
import { compareHistograms, compareStats, formatSelector, parseSelector, sideLabel } from '../../transforms/compare';
import { Histogram } from '../../viz/Histogram';
import { TimeSeriesPanel, type Annotation } from '../../viz/TimeSeriesPanel';
import { DataTable } from '../shared/DataTable';
import { fmtNum } from '../shared/format';
import { Panel } from '../shared/Panel';
import { ViewObject, type QueryContext, type ViewState } from '../shared/viewObject';

interface CompareState extends ViewState {
  a: string;
  b: string;
}

const DEFAULT_A = 'backend=vllm';
const DEFAULT_B = 'backend=tgi';

export class CompareScene extends ViewObject<CompareState> {
  static Component = CompareRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.compare] });

  constructor(state: Partial<CompareState> = {}) {
    super({ sections: {}, a: DEFAULT_A, b: DEFAULT_B, ...state });
  }

  public getUrlState(): SceneObjectUrlValues {
    return { a: this.state.a, b: this.state.b };
  }

  public updateFromUrl(values: SceneObjectUrlValues): void {
    const a = typeof values.a === 'string' && values.a ? values.a : this.state.a;
    const b = typeof values.b === 'string' && values.b ? values.b : this.state.b;
    if (a !== this.state.a || b !== this.state.b) {
      this.setState({ a, b });
      if (this.isActive) {
        this.refresh();
      }
    }
  }

  public setSides(a: string, b: string): void {
    this.setState({ a, b });
    this.refresh();
  }

  protected load(ctx: QueryContext): void {
    this.section('compare', api.compare(this.state.a, this.state.b, { from: ctx.from, to: ctx.to }));
  }
}

const TIME = 'time' as FieldType;
const NUMBER = 'number' as FieldType;

function p99Frames(d: CompareAnswer, la: string, lb: string): DataFrame[] {
  const frame = (name: string, values: Array<number | null>, color: string, dashed: boolean): DataFrame => ({
    name,
    length: d.times.length,
    fields: [
      { name: 'time', type: TIME, config: {}, values: d.times },
      { name, type: NUMBER, config: {
          unit: 'ms',
          displayName: name,
          color: { mode: 'fixed', fixedColor: color },
          custom: { spanNulls: false, fillOpacity: dashed ? 0 : 10, lineStyle: dashed ? { fill: 'dash', dash: [6, 4] } : { fill: 'solid' } },
        }, values: values.map((v) => v) },
    ],
  });
  // Same colours as the histogram (A blue, B orange); P50 dashed.
  return [
    frame(`P99 ${la}`, d.a.p99Series, 'blue', false),
    frame(`P99 ${lb}`, d.b.p99Series, 'orange', false),
    frame(`P50 ${la}`, d.a.p50Series, 'blue', true),
    frame(`P50 ${lb}`, d.b.p50Series, 'orange', true),
  ];
}

function SideEditor({ label, value, onChange, testId }: { label: string; value: string; onChange: (v: string) => void; testId: string }) {
  const s = parseSelector(value);
  return (
    <div data-testid={testId} style={{ display: 'flex', gap: 8, alignItems: 'flex-end' }}>
      <Field label={`${label}: backend`}>
        <Select
          width={14}
          options={[{ label: 'any', value: '' }, { label: 'vLLM', value: 'vllm' }, { label: 'TGI', value: 'tgi' }]}
          value={s.backend ?? ''}
          onChange={(o) => onChange(formatSelector({ ...s, backend: o.value || undefined }))}
          aria-label={`${label} backend`}
        />
      </Field>
      <Field label={`${label}: model version`}>
        <Input width={24} value={s.model ?? ''} placeholder="any" onChange={(e) => onChange(formatSelector({ ...s, model: e.currentTarget.value || undefined }))} aria-label={`${label} model`} />
      </Field>
    </div>
  );
}

function CompareRenderer({ model }: SceneComponentProps<CompareScene>) {
  const { a, b } = model.useState();
  const styles = useStyles2(getStyles);
  const [da, setA] = useState(a);
  const [db, setB] = useState(b);
  const compare = model.get<CompareAnswer>('compare');
  const data = compare.status === 'ok' ? compare.data : undefined;
  const timeRange = sceneGraph.getTimeRange(model).useState().value;
  const la = data ? sideLabel(data.a, 'A') : 'A';
  const lb = data ? sideLabel(data.b, 'B') : 'B';
  const jitterFrames = useMemo(() => (data ? p99Frames(data, la, lb) : []), [data, la, lb]);
  const hists = useMemo(() => (data ? compareHistograms(data) : undefined), [data]);
  const hot: Annotation[] = useMemo(
    () =>
      data
        ? [
            ...data.a.hotZones.map((z) => ({ timeMs: z.startMs, endMs: z.endMs, label: `${la}: jitter P99/P50 = ${z.ratio.toFixed(1)}` })),
            ...data.b.hotZones.map((z) => ({ timeMs: z.startMs, endMs: z.endMs, label: `${lb}: jitter P99/P50 = ${z.ratio.toFixed(1)}` })),
          ]
        : [],
    [data, la, lb]
  );
  return (
    <div className={styles.page} data-testid={testIds.page.container('compare')}>
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
      <div className={styles.row}>
        <Panel id="compare-stats" title="Side by side" section={compare} height={200}>
          {(d) => (
            <DataTable
              testId={testIds.compare.stats}
              rows={compareStats(d)}
              rowKey={(r) => r.stat}
              columns={[
                { id: 'stat', header: 'Measure', cell: (r) => r.stat },
                { id: 'a', header: `A: ${la}`, cell: (r) => fmtNum(r.a, 0), align: 'right' },
                { id: 'b', header: `B: ${lb}`, cell: (r) => fmtNum(r.b, 0), align: 'right' },
                { id: 'change', header: 'B vs A', cell: (r) => (r.change === null ? '—' : `${r.change > 0 ? '+' : ''}${(r.change * 100).toFixed(0)}%`), align: 'right' },
              ]}
            />
          )}
        </Panel>
        <Panel id="compare-histogram" title="Latency distribution (share of requests)" section={compare} sourceErrors={false} height={200} isEmpty={(d) => d.a.count + d.b.count === 0} emptyText="Neither side has requests in this window.">
          {(d) =>
            hists && (
              <Histogram
                height={170}
                series={[
                  { label: `A: ${la}`, hist: hists[0] },
                  { label: `B: ${lb}`, hist: hists[1] },
                ]}
                markers={[
                  ...(d.a.p99Ms !== null ? [{ value: d.a.p99Ms, label: 'A P99' }] : []),
                  ...(d.b.p99Ms !== null ? [{ value: d.b.p99Ms, label: 'B P99' }] : []),
                ]}
              />
            )
          }
        </Panel>
      </div>
      <Panel id="compare-jitter" title="P50 / P99 over time, jitter hot zones shaded" section={compare} sourceErrors={false} height={240} isEmpty={(d) => d.times.length === 0}>
        {(_d, w, h) => <TimeSeriesPanel id="compare" frames={jitterFrames} timeRange={timeRange} width={w} height={h} annotations={hot} />}
      </Panel>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  form: css({ display: 'flex', gap: theme.spacing(2), alignItems: 'flex-end', flexWrap: 'wrap' }),
  row: css({ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(420px, 1fr))', gap: theme.spacing(1) }),
});
