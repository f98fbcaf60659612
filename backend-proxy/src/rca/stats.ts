/** Robust statistics used to compare a hop with its healthy baseline (median/MAD: a few outliers do not move them). */
export interface RobustStats {
  count: number;
  median: number;
  /** Median absolute deviation, unscaled. */
  mad: number;
  p95: number;
  p99: number;
}

function quantileSorted(s: ArrayLike<number>, q: number): number {
  if (s.length === 0) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export function robustStats(values: number[]): RobustStats {
  const s = Float64Array.from(values).sort();
  const median = quantileSorted(s, 0.5);
  const dev = Float64Array.from(s, (v) => Math.abs(v - median)).sort();
  return {
    count: s.length,
    median,
    mad: quantileSorted(dev, 0.5),
    p95: quantileSorted(s, 0.95),
    p99: quantileSorted(s, 0.99),
  };
}

/** Robust z-score: (x − median) / (1.4826·MAD), with the scale floored so a constant baseline stays usable. */
export function robustZ(x: number, st: RobustStats, floorRatio: number, floorMs = 0.05): number {
  const scale = Math.max(1.4826 * st.mad, Math.abs(st.median) * floorRatio, floorMs);
  return (x - st.median) / scale;
}
