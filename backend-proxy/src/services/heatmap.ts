/**
 * GPUs (or MIG instances) × time, coloured by SM activity. Field fallback DCGM_FI_PROF_SM_ACTIVE →
 * DCGM_FI_PROF_GR_ENGINE_ACTIVE → DCGM_FI_DEV_GPU_UTIL (÷100); both `Hostname` and `hostname`; DCGM blank sentinels
 * (≥ 1.4e14, the FP64/INT64 "blank" families) are no data. The field used is reported.
 */
import { DcgmField, type HeatmapAnswer } from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import type { PromSeries, PrometheusSource } from '../sources/prometheus';
import { dcgmQuery } from './promql';

/** In order of preference: the contract lists them so. */
const DCGM_FIELDS = DcgmField.options;
/** DCGM_FP64_BLANK is 140737488355328 (2^47); the INT64 blanks are ≈ 9.22e18. Anything that large is a sentinel. */
const BLANK_MIN = 1.4e14;

interface HeatmapQuery {
  range: TimeRange;
  stepMs: number;
  pod?: string;
  namespace?: string;
}

function dcgmValue(field: DcgmField, v: number | null): number | null {
  if (v === null || !Number.isFinite(v) || v >= BLANK_MIN || v < 0) return null;
  const x = field === 'DCGM_FI_DEV_GPU_UTIL' ? v / 100 : v;
  return Math.min(1, Math.round(x * 10000) / 10000);
}

/** Builds the grid from one field's series; rows sorted by host then GPU. */
function heatmapFrom(
  field: DcgmField,
  series: PromSeries[],
  from: number,
  to: number,
  step: number
): Pick<HeatmapAnswer, 'times' | 'rows'> {
  const n = Math.floor((to - from) / step) + 1;
  const times = Array.from({ length: n }, (_, i) => from + i * step);
  const rows = series
    .map((s) => {
      const l = s.metric;
      const values: Array<number | null> = new Array(n).fill(null);
      for (const [t, v] of s.points) {
        const i = Math.round((t - from) / step);
        if (i >= 0 && i < n) values[i] = dcgmValue(field, v);
      }
      const row: HeatmapAnswer['rows'][number] = { gpu: l.gpu ?? l.device ?? '?', values };
      const opt = {
        uuid: l.UUID ?? l.uuid,
        mig: l.GPU_I_ID,
        host: l.Hostname ?? l.hostname,
        pod: l.pod ?? l.exported_pod,
        namespace: l.namespace ?? l.exported_namespace,
      };
      for (const [k, v] of Object.entries(opt)) if (v) (row as Record<string, unknown>)[k] = v;
      return row;
    })
    .sort(
      (a, b) =>
        (a.host ?? '').localeCompare(b.host ?? '') ||
        a.gpu.localeCompare(b.gpu, undefined, { numeric: true }) ||
        (a.mig ?? '').localeCompare(b.mig ?? '')
    );
  return { times, rows };
}

export class HeatmapService {
  constructor(private prometheus: PrometheusSource | undefined) {}

  async query(q: HeatmapQuery): Promise<HeatmapAnswer> {
    const { range, stepMs: step } = q;
    const base: Omit<HeatmapAnswer, 'field' | 'times' | 'rows' | 'sources'> = {
      from: range.from,
      to: range.to,
      stepMs: step,
      granularity: 'gpu',
      note: 'one row per GPU or MIG instance: DCGM gives no live per-SM figures',
    };
    const prom = this.prometheus;
    if (!prom)
      return {
        ...base,
        field: null,
        times: [],
        rows: [],
        sources: [{ source: 'prometheus', ok: false, error: 'prometheus: not configured' }],
      };
    const t0 = performance.now();
    // All three in parallel: one round trip under the deadline; the first field with any real value wins.
    const results = await Promise.all(
      DCGM_FIELDS.map((f) =>
        prom.queryRange(dcgmQuery(f, q), range.from, range.to, step).then(
          (s) => ({ f, s }),
          (e: Error) => ({ f, e })
        )
      )
    );
    const latencyMs = Math.round(performance.now() - t0);
    const errors = results.filter((x): x is { f: DcgmField; e: Error } => 'e' in x);
    const status = {
      source: 'prometheus',
      ok: !errors.length,
      latencyMs,
      ...(errors.length ? { error: errors[0].e.message } : {}),
    };
    for (const x of results) {
      if ('e' in x) continue;
      const grid = heatmapFrom(x.f, x.s, range.from, range.to, step);
      if (grid.rows.some((row) => row.values.some((v) => v !== null))) {
        const fallback =
          x.f !== 'DCGM_FI_PROF_SM_ACTIVE'
            ? `; ${x.f} used because ${DCGM_FIELDS.slice(0, DCGM_FIELDS.indexOf(x.f)).join(' and ')} had no data`
            : '';
        return { ...base, note: base.note + fallback, field: x.f, ...grid, sources: [status] };
      }
    }
    return {
      ...base,
      field: null,
      times: [],
      rows: [],
      note: `${base.note}; no DCGM field had data (${DCGM_FIELDS.join(', ')})`,
      sources: [status],
    };
  }
}
