/** Small pure statistics helpers shared by the services. */

/** Quantile of a sorted array (linear interpolation). */
export function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function quantileOrNull(values: number[], q: number): number | null {
  if (!values.length) return null;
  return round(
    quantile(
      [...values].sort((a, b) => a - b),
      q
    )
  );
}

export const round = (n: number, digits = 3): number => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};
