/**
 * The golden series as plain numbers: several series of one metric combined per instant (the stat's number and the
 * insights' inputs), and the four series the insights compare aligned on one time grid.
 */
import type { GoldenSeries } from '../../contract';
import type { InsightInput } from './insights';

export interface TimesValues {
  times: number[];
  values: Array<number | null>;
}

/** Series of one metric combined per timestamp (sum, max or mean of the non-null values; null if none). */
export function combineSeries(
  series: Array<Pick<GoldenSeries, 'points'>>,
  combine: 'sum' | 'max' | 'mean'
): TimesValues {
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

/** Mean across rows per column, null where no row has a value (the GPUs' mean activity, 0..1). */
export function meanAcross(times: number[], rows: Array<ArrayLike<number | null>>): TimesValues {
  const n = times.length;
  const sum = new Float64Array(n);
  const count = new Uint32Array(n);
  for (const r of rows) {
    for (let c = 0; c < n; c++) {
      const v = r[c];
      if (v !== null && v !== undefined && Number.isFinite(v)) {
        sum[c] += v;
        count[c]++;
      }
    }
  }
  return { times, values: Array.from(sum, (x, c) => (count[c] ? x / count[c] : null)) };
}

/**
 * Value of a (times, values) series at its nearest sample to `t` within `toleranceMs` (the earliest of equally near
 * ones). Times in ascending order are searched by bisection — the insights align four 720-point series on each
 * other, and a scan per instant made that quadratic (≈ 2 M steps, tens of ms on every Overview load); other orders
 * fall back to the scan.
 */
export function sampleAt(
  series: { times: number[]; values: Array<number | null> },
  t: number,
  toleranceMs: number
): number | null {
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

/** Aligns the four series the insights need on the requests' time grid (or the P99's when there are none). */
export function insightInput(
  s: { rps?: TimesValues; tokens?: TimesValues; p99?: TimesValues; gpu?: TimesValues },
  stepMs: number
): InsightInput {
  const empty: TimesValues = { times: [], values: [] };
  const rps = s.rps ?? empty;
  const p99 = s.p99 ?? empty;
  const times = rps.times.length ? rps.times : p99.times;
  const tol = stepMs / 2 + 1;
  return {
    times,
    rps: times.map((t) => sampleAt(rps, t, tol)),
    gpuActive: times.map((t) => sampleAt(s.gpu ?? empty, t, tol)),
    p99Seconds: times.map((t) => sampleAt(p99, t, tol)),
    tokensPerSecond: times.map((t) => sampleAt(s.tokens ?? empty, t, tol)),
  };
}
