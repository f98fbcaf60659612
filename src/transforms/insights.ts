/**
 * Threshold hints computed from the golden series (never hard-coded answers): the seed's two rules.
 *  - RPS ≥ 120 while GPU activity ≥ 92% at the same instant → pre-allocate the KV cache.
 *  - End-to-end P99 > 2.1 s while output tokens/s is down ≥ 15% from its baseline → consider attention-head pruning.
 * Each insight says when it held and with which values, so a reader can check it on the charts.
 */

export interface InsightInput {
  times: number[];
  rps: Array<number | null>;
  /** Mean GPU activity across GPUs, 0..1. */
  gpuActive: Array<number | null>;
  /** End-to-end P99 in seconds. */
  p99Seconds: Array<number | null>;
  tokensPerSecond: Array<number | null>;
}

export interface Insight {
  id: 'kv-cache-preallocation' | 'attention-head-pruning';
  title: string;
  detail: string;
  /** The last instant the condition held. */
  atMs: number;
  /** How many samples of the window met the condition. */
  samples: number;
}

export const INSIGHT_THRESHOLDS = {
  rps: 120,
  gpuActive: 0.92,
  p99Seconds: 2.1,
  tokensDrop: 0.15,
} as const;

const ok = (v: number | null | undefined): v is number => v !== null && v !== undefined && Number.isFinite(v);

/** Median of the finite values of the first half of the window: the "before" that a drop is measured against. */
function baseline(xs: Array<number | null>): number | undefined {
  const half = xs
    .slice(0, Math.max(1, Math.floor(xs.length / 2)))
    .filter(ok)
    .sort((a, b) => a - b);
  if (!half.length) {
    return undefined;
  }
  const m = Math.floor(half.length / 2);
  return half.length % 2 ? half[m] : (half[m - 1] + half[m]) / 2;
}

export function computeInsights(input: InsightInput): Insight[] {
  const out: Insight[] = [];
  const n = input.times.length;

  let kvLast = -1;
  let kvCount = 0;
  for (let i = 0; i < n; i++) {
    const r = input.rps[i];
    const g = input.gpuActive[i];
    if (ok(r) && ok(g) && r >= INSIGHT_THRESHOLDS.rps && g >= INSIGHT_THRESHOLDS.gpuActive) {
      kvLast = i;
      kvCount++;
    }
  }
  if (kvLast >= 0) {
    out.push({
      id: 'kv-cache-preallocation',
      title: 'Pre-allocate the KV cache',
      detail: `RPS reached ${input.rps[kvLast]!.toFixed(0)} (≥ ${INSIGHT_THRESHOLDS.rps}) while GPUs were ${(input.gpuActive[kvLast]! * 100).toFixed(0)}% active (≥ ${INSIGHT_THRESHOLDS.gpuActive * 100}%) in ${kvCount} sample(s): allocation on the hot path will queue requests; reserve KV-cache blocks ahead (e.g. raise gpu_memory_utilization / num_gpu_blocks).`,
      atMs: input.times[kvLast],
      samples: kvCount,
    });
  }

  const base = baseline(input.tokensPerSecond);
  if (base !== undefined && base > 0) {
    let last = -1;
    let count = 0;
    for (let i = 0; i < n; i++) {
      const p = input.p99Seconds[i];
      const t = input.tokensPerSecond[i];
      if (ok(p) && ok(t) && p > INSIGHT_THRESHOLDS.p99Seconds && t <= base * (1 - INSIGHT_THRESHOLDS.tokensDrop)) {
        last = i;
        count++;
      }
    }
    if (last >= 0) {
      const drop = 1 - input.tokensPerSecond[last]! / base;
      out.push({
        id: 'attention-head-pruning',
        title: 'Consider attention-head pruning',
        detail: `End-to-end P99 was ${input.p99Seconds[last]!.toFixed(2)} s (> ${INSIGHT_THRESHOLDS.p99Seconds} s) while output tokens/s fell ${(drop * 100).toFixed(0)}% below its baseline of ${base.toFixed(0)} (≥ ${INSIGHT_THRESHOLDS.tokensDrop * 100}%) in ${count} sample(s): decoding is compute-bound; pruning attention heads or a smaller draft model cuts per-token cost.`,
        atMs: input.times[last],
        samples: count,
      });
    }
  }
  return out;
}
