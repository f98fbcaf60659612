/** 7d, 36h, 90m, 45s: a retention as people write it. */
export function formatDuration(ms: number): string {
  for (const [unit, n] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= n && ms % n === 0) return `${ms / n}${unit}`;
  }
  return `${ms}ms`;
}
