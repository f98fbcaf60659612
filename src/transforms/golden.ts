/**
 * Proxy answers for the Overview → what the charts draw: golden series as Grafana DataFrames (one chart per metric,
 * one series per backend/label set), the GPU heatmap grid, and the aligned inputs of the insights.
 */
import type { DataFrame, FieldType } from '@grafana/data';

import type { GoldenAnswer, GoldenMetric, GoldenSeries, HeatmapAnswer } from '../../contract';
import { buildHeatmapGrid, type HeatmapGrid } from './heatmapGrid';
import type { InsightInput } from './insights';

export interface GoldenPanelDef {
  metric: GoldenMetric;
  title: string;
  /** Grafana unit id, so axes and tooltips format like Grafana's own panels. */
  unit: string;
  /** How several series of the metric combine into one number (stat) and into the insight inputs. */
  combine: 'sum' | 'max' | 'mean';
  decimals?: number;
  /** The axis shows at least 0..softMax (a flat zero error rate would otherwise get uPlot's default 0..100 range). */
  softMax?: number;
}

export const GOLDEN_PANELS: GoldenPanelDef[] = [
  { metric: 'rps', title: 'Requests / s', unit: 'reqps', combine: 'sum', decimals: 1 },
  { metric: 'output_tokens_per_s', title: 'Output tokens / s', unit: 'short', combine: 'sum', decimals: 0 },
  { metric: 'e2e_p99_s', title: 'End-to-end P99', unit: 's', combine: 'max', decimals: 2 },
  { metric: 'ttft_p99_s', title: 'TTFT P99', unit: 's', combine: 'max', decimals: 2 },
  { metric: 'kv_cache_hit_rate', title: 'KV-cache hit rate', unit: 'percentunit', combine: 'mean', decimals: 1 },
  { metric: 'error_rate', title: 'Error rate', unit: 'percentunit', combine: 'max', decimals: 2, softMax: 0.01 },
];

/** A readable series name: backend plus the labels that distinguish it (model, service…), and its origin if OTel. */
export function seriesName(s: GoldenSeries): string {
  const labels = Object.entries(s.labels)
    .filter(([k]) => k !== 'backend' && k !== '__name__')
    .map(([k, v]) => (k === 'model_name' || k === 'model' || k === 'service' ? v : `${k}=${v}`));
  return [s.backend, ...labels].join(' ') + (s.origin === 'otel' ? ' (client spans)' : '');
}

const TIME = 'time' as FieldType;
const NUMBER = 'number' as FieldType;

/** One DataFrame per series of `metric`: a time field and a value field carrying the panel's unit. */
export function goldenFrames(answer: GoldenAnswer, def: GoldenPanelDef): DataFrame[] {
  return answer.series
    .filter((s) => s.metric === def.metric)
    .map((s) => ({
      name: seriesName(s),
      refId: def.metric,
      length: s.points.length,
      fields: [
        { name: 'time', type: TIME, config: {}, values: s.points.map((p) => p[0]) },
        {
          name: seriesName(s),
          type: NUMBER,
          labels: s.labels,
          config: { unit: def.unit, decimals: def.decimals, displayName: seriesName(s), color: { mode: 'palette-classic' }, custom: { spanNulls: false, fillOpacity: 8, lineWidth: 1, ...(def.softMax !== undefined ? { axisSoftMin: 0, axisSoftMax: def.softMax } : {}) } },
          values: s.points.map((p) => p[1]),
        },
      ],
    }));
}

/** Series of one metric combined per timestamp (sum, max or mean of the non-null values; null if none). */
export function combineSeries(series: GoldenSeries[], combine: GoldenPanelDef['combine']): { times: number[]; values: Array<number | null> } {
  // One accumulator per timestamp (no list of values): the Overview combines 720-point series on every load.
  const acc = new Map<number, { sum: number; max: number; n: number }>();
  for (const s of series) {
    for (const [t, v] of s.points) {
      let a = acc.get(t);
      if (!a) {
        a = { sum: 0, max: -Infinity, n: 0 };
        acc.set(t, a);
      }
      if (v !== null && Number.isFinite(v)) {
        a.sum += v;
        a.max = Math.max(a.max, v);
        a.n++;
      }
    }
  }
  const times = [...acc.keys()].sort((a, b) => a - b);
  const values = times.map((t) => {
    const a = acc.get(t)!;
    if (!a.n) {
      return null;
    }
    return combine === 'sum' ? a.sum : combine === 'max' ? a.max : a.sum / a.n;
  });
  return { times, values };
}

/** The latest non-null combined value of a metric (the big number of a stat). */
export function latestValue(answer: GoldenAnswer, def: GoldenPanelDef): number | undefined {
  const { values } = combineSeries(answer.series.filter((s) => s.metric === def.metric), def.combine);
  for (let i = values.length - 1; i >= 0; i--) {
    if (values[i] !== null) {
      return values[i]!;
    }
  }
  return undefined;
}

export function heatmapGrid(answer: HeatmapAnswer): HeatmapGrid {
  return buildHeatmapGrid({
    rows: answer.rows.map((r) => ({
      id: r.uuid ? `${r.uuid}${r.mig ? `-${r.mig}` : ''}` : `${r.host ?? 'host'}-${r.gpu}${r.mig ? `-${r.mig}` : ''}`,
      label: `${r.host ? `${r.host} · ` : ''}GPU ${r.gpu}${r.mig ? ` · MIG ${r.mig}` : ''}`,
      gpu: r.gpu,
      host: r.host,
      pod: r.pod,
      namespace: r.namespace,
      mig: r.mig,
    })),
    times: answer.times,
    values: answer.rows.map((r) => r.values),
    field: answer.field ?? 'no DCGM field',
    unit: 'ratio',
  });
}

/** Mean activity across GPUs per heatmap column, 0..1 (null where no GPU reported). */
function meanGpuActivity(answer: HeatmapAnswer): { times: number[]; values: Array<number | null> } {
  const n = answer.times.length;
  const sum = new Float64Array(n);
  const count = new Uint32Array(n);
  for (const r of answer.rows) {
    for (let c = 0; c < n; c++) {
      const v = r.values[c];
      if (v !== null && v !== undefined && Number.isFinite(v)) {
        sum[c] += v;
        count[c]++;
      }
    }
  }
  return { times: answer.times, values: Array.from(sum, (s, c) => (count[c] ? s / count[c] : null)) };
}

/**
 * Value of a (times, values) series at its nearest sample to `t` within `toleranceMs` (the earliest of equally near
 * ones). Times in ascending order are searched by bisection — the insights align four 720-point series on each
 * other, and a scan per instant made that quadratic (≈ 2 M steps, tens of ms on every Overview load); other orders
 * fall back to the scan.
 */
export function sampleAt(series: { times: number[]; values: Array<number | null> }, t: number, toleranceMs: number): number | null {
  const { times, values } = series;
  if (!isAscending(times)) {
    let best: number | null = null;
    let bestDt = Infinity;
    for (let i = 0; i < times.length; i++) {
      const dt = Math.abs(times[i] - t);
      if (dt <= toleranceMs && dt < bestDt) {
        bestDt = dt;
        best = values[i];
      }
    }
    return best;
  }
  // First index whose time is ≥ t; the nearest sample is it or the one before (ties: the earlier, as the scan).
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  let i = -1;
  if (lo > 0 && (lo === times.length || t - times[lo - 1] <= times[lo] - t)) {
    i = lo - 1;
    while (i > 0 && times[i - 1] === times[i]) {
      i--;
    }
  } else if (lo < times.length) {
    i = lo;
  }
  return i >= 0 && Math.abs(times[i] - t) <= toleranceMs ? values[i] : null;
}

const ascending = new WeakMap<number[], boolean>();

function isAscending(times: number[]): boolean {
  let known = ascending.get(times);
  if (known === undefined) {
    known = times.every((x, i) => i === 0 || times[i - 1] <= x);
    ascending.set(times, known);
  }
  return known;
}

/** Aligns the four series the insights need on the golden answer's time grid. */
export function insightInput(golden: GoldenAnswer, heatmap?: HeatmapAnswer): InsightInput {
  const pick = (metric: GoldenMetric, combine: GoldenPanelDef['combine']) =>
    combineSeries(golden.series.filter((s) => s.metric === metric), combine);
  const rps = pick('rps', 'sum');
  const tokens = pick('output_tokens_per_s', 'sum');
  const p99 = pick('e2e_p99_s', 'max');
  const gpu = heatmap ? meanGpuActivity(heatmap) : { times: [], values: [] };
  const times = rps.times.length ? rps.times : p99.times;
  const tol = Math.max(golden.stepMs, heatmap?.stepMs ?? 0) / 2 + 1;
  return {
    times,
    rps: times.map((t) => sampleAt(rps, t, tol)),
    gpuActive: times.map((t) => sampleAt(gpu, t, tol)),
    p99Seconds: times.map((t) => sampleAt(p99, t, tol)),
    tokensPerSecond: times.map((t) => sampleAt(tokens, t, tol)),
  };
}
