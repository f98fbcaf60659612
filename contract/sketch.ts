/**
 * The mergeable latency sketch of the runs contract (LatencySketch), as code both sides import: the load generator
 * adds each request's latency, the proxy merges the workers' sketches of a distributed run and reads percentiles.
 *
 * Log buckets with relative accuracy alpha (DDSketch's scheme): γ = (1+α)/(1−α); a value v ≥ minMs falls in bucket
 * i = ceil(log(v/minMs) / log γ), which covers (minMs·γ^(i−1), minMs·γ^i]; its representative value
 * 2·minMs·γ^i/(γ+1) is within α of every value in it. Values below minMs (0 included) are counted in zeroCount.
 * Merging adds bucket counts, so a merged quantile is as accurate as one sketch of all the values.
 */
import type { LatencySketch, LatencySummary } from './runs';

/** 1% relative error: a P99 of 2,000 ms reads 1,980–2,020 ms. About 700 buckets cover 1 µs to 1 hour. */
export const DEFAULT_SKETCH_ALPHA = 0.01;
/** 1 µs: anything faster is "zero" for request latencies. */
export const DEFAULT_SKETCH_MIN_MS = 0.001;

export function emptySketch(alpha = DEFAULT_SKETCH_ALPHA, minMs = DEFAULT_SKETCH_MIN_MS): LatencySketch {
  if (!(alpha > 0 && alpha <= 0.1)) throw new RangeError(`sketch alpha must be in (0, 0.1], not ${alpha}`);
  if (!(minMs > 0)) throw new RangeError(`sketch minMs must be > 0, not ${minMs}`);
  return { alpha, buckets: {}, zeroCount: 0, minMs, count: 0, sum: 0, max: 0 };
}

const gamma = (alpha: number): number => (1 + alpha) / (1 - alpha);

/** The bucket of `valueMs` (≥ minMs). */
export function sketchIndex(s: Pick<LatencySketch, 'alpha' | 'minMs'>, valueMs: number): number {
  return Math.ceil(Math.log(valueMs / s.minMs) / Math.log(gamma(s.alpha)));
}

/** The value that stands for every value of bucket `index`. */
export function sketchBucketValue(s: Pick<LatencySketch, 'alpha' | 'minMs'>, index: number): number {
  const g = gamma(s.alpha);
  return (2 * s.minMs * g ** index) / (g + 1);
}

/** Adds `n` observations of `valueMs` (in place). Non-finite or negative values are ignored: returns false. */
export function sketchAdd(s: LatencySketch, valueMs: number, n = 1): boolean {
  if (!Number.isFinite(valueMs) || valueMs < 0 || !Number.isInteger(n) || n <= 0) return false;
  if (valueMs < s.minMs) s.zeroCount += n;
  else {
    const k = String(sketchIndex(s, valueMs));
    s.buckets[k] = (s.buckets[k] ?? 0) + n;
  }
  s.count += n;
  s.sum += valueMs * n;
  if (valueMs > s.max) s.max = valueMs;
  return true;
}

/**
 * a ∪ b as a new sketch. Same alpha and minMs: exact (counts add). Different ones: b's buckets are re-binned into
 * a's by their representative values, which adds b's error to a's (still within alpha + b.alpha).
 */
export function mergeSketches(a: LatencySketch, b: LatencySketch): LatencySketch {
  const out: LatencySketch = { ...a, buckets: { ...a.buckets } };
  out.count = a.count + b.count;
  out.sum = a.sum + b.sum;
  out.max = Math.max(a.max, b.max);
  const same = a.alpha === b.alpha && a.minMs === b.minMs;
  out.zeroCount = a.zeroCount + (same ? b.zeroCount : 0);
  if (!same) {
    // b's "zero" values are below b.minMs; below a.minMs too when a.minMs is larger, else they land in a's lowest bucket.
    if (b.zeroCount) {
      if (b.minMs <= a.minMs) out.zeroCount += b.zeroCount;
      else
        out.buckets[String(sketchIndex(a, b.minMs))] =
          (out.buckets[String(sketchIndex(a, b.minMs))] ?? 0) + b.zeroCount;
    }
  }
  for (const [k, c] of Object.entries(b.buckets)) {
    if (same) {
      out.buckets[k] = (out.buckets[k] ?? 0) + c;
      continue;
    }
    const v = sketchBucketValue(b, Number(k));
    if (v < a.minMs) out.zeroCount += c;
    else {
      const j = String(sketchIndex(a, v));
      out.buckets[j] = (out.buckets[j] ?? 0) + c;
    }
  }
  return out;
}

/**
 * The q-quantile (0..1), nearest rank as the load generator's exact summaries use it (the ⌈q·n⌉-th smallest
 * value), never above the exact max; null for an empty sketch.
 */
export function sketchQuantile(s: LatencySketch, q: number): number | null {
  const total = s.zeroCount + Object.values(s.buckets).reduce((x, y) => x + y, 0);
  if (!total) return null;
  const rank = Math.min(total, Math.max(1, Math.ceil(Math.min(1, Math.max(0, q)) * total)));
  if (rank <= s.zeroCount) return 0;
  let seen = s.zeroCount;
  const keys = Object.keys(s.buckets)
    .map(Number)
    .sort((x, y) => x - y);
  for (const k of keys) {
    seen += s.buckets[String(k)];
    if (seen >= rank) return Math.min(sketchBucketValue(s, k), s.max);
  }
  return s.max;
}

const r3 = (v: number | null): number | null => (v === null ? null : Number(v.toFixed(3)));

/** The contract's percentile summary read from a sketch: count, mean and max exact, percentiles within alpha. */
export function sketchSummary(s: LatencySketch): LatencySummary {
  if (!s.count) return { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null };
  return {
    count: s.count,
    mean: r3(s.sum / s.count),
    p50: r3(sketchQuantile(s, 0.5)),
    p90: r3(sketchQuantile(s, 0.9)),
    p95: r3(sketchQuantile(s, 0.95)),
    p99: r3(sketchQuantile(s, 0.99)),
    max: r3(s.max),
  };
}
