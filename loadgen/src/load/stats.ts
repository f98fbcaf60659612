import type { LatencySummary } from '../../../contract/runs';

/** Latency statistics for the driver: exact percentiles over recorded values (bounded by the run's length). */
export class Samples {
  private xs: number[] = [];
  private sorted = true;
  add(v: number): void {
    if (this.xs.length && v < this.xs[this.xs.length - 1]) this.sorted = false;
    this.xs.push(v);
  }
  get count(): number {
    return this.xs.length;
  }
  /** The recorded values (sorted or not). */
  values(): readonly number[] {
    return this.xs;
  }
  private sort(): number[] {
    if (!this.sorted) {
      this.xs.sort((a, b) => a - b);
      this.sorted = true;
    }
    return this.xs;
  }
  /** Nearest-rank percentile (q in 0..100); NaN when empty. */
  pct(q: number): number {
    const s = this.sort();
    if (!s.length) return NaN;
    return s[Math.min(s.length - 1, Math.max(0, Math.ceil((q / 100) * s.length) - 1))];
  }
  mean(): number {
    return this.xs.length ? this.xs.reduce((a, b) => a + b, 0) / this.xs.length : NaN;
  }
  max(): number {
    return this.xs.length ? this.sort()[this.xs.length - 1] : NaN;
  }
  /** The contract's LatencySummary: absent figures are null. */
  summary(): LatencySummary {
    const r = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(3)) : null);
    return {
      count: this.count,
      mean: r(this.mean()),
      p50: r(this.pct(50)),
      p90: r(this.pct(90)),
      p95: r(this.pct(95)),
      p99: r(this.pct(99)),
      max: r(this.max()),
    };
  }
}

/** TPOT as defined for the summary: (latency − TTFT) / (tokens − 1); undefined for fewer than 2 tokens. */
export function tpot(latencyMs: number, ttftMs: number, tokens: number): number | undefined {
  return tokens >= 2 ? (latencyMs - ttftMs) / (tokens - 1) : undefined;
}
