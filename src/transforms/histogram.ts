/**
 * Histograms for distributions drawn side by side or overlaid (TLS handshake latency, A/B request latency).
 * Bins are shared between series so overlays compare like with like.
 */

export interface Histogram {
  /** Bin edges, length bins + 1, ascending. */
  edges: number[];
  counts: number[];
  total: number;
}

/** Log-spaced edges suit latencies spanning ms to seconds; linear ones suit narrow ranges. */
function binEdges(min: number, max: number, bins: number, scale: 'linear' | 'log' = 'log'): number[] {
  if (!(max > min)) {
    max = min + 1;
  }
  const edges: number[] = [];
  if (scale === 'log' && min > 0) {
    const a = Math.log(min);
    const b = Math.log(max);
    for (let i = 0; i <= bins; i++) {
      edges.push(Math.exp(a + ((b - a) * i) / bins));
    }
    // exp(log(x)) is not always x: pin the ends so the extremes fall inside.
    edges[0] = min;
    edges[bins] = max;
  } else {
    for (let i = 0; i <= bins; i++) {
      edges.push(min + ((max - min) * i) / bins);
    }
  }
  return edges;
}

export function histogram(values: number[], edges: number[]): Histogram {
  const counts = new Array(edges.length - 1).fill(0);
  let total = 0;
  for (const v of values) {
    if (!Number.isFinite(v) || v < edges[0] || v > edges[edges.length - 1]) {
      continue;
    }
    let lo = 0;
    let hi = counts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (edges[mid] <= v) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    counts[lo]++;
    total++;
  }
  return { edges, counts, total };
}

/** Histograms of several samples on common edges (from the smallest to the largest value of all of them). */
export function sharedHistograms(samples: number[][], bins = 30, scale: 'linear' | 'log' = 'log'): Histogram[] {
  const all = samples.flat().filter((v) => Number.isFinite(v) && (scale === 'linear' || v > 0));
  if (!all.length) {
    return samples.map(() => ({ edges: [0, 1], counts: [0], total: 0 }));
  }
  let min = Infinity;
  let max = -Infinity;
  for (const v of all) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const edges = binEdges(min, max, bins, scale);
  return samples.map((s) => histogram(s, edges));
}

/** Quantile by linear interpolation between closest ranks (q in 0..1). */
export function quantile(values: number[], q: number): number | undefined {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) {
    return undefined;
  }
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}
