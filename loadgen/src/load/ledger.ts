/**
 * The requests a run record keeps, one click from their trace: the slowest (top K by end-to-end time) and a uniform
 * sample of the failed and degraded ones (reservoir, seeded), plus where every request's trace id came from.
 */
import type { RunRequest } from '../../../contract/runs';
import { seededRandom } from '../shared/random';
import type { TraceIdSource } from './trace-context';

export class RequestLedger {
  private slow: RunRequest[] = [];
  private slowFloor = -Infinity;
  private bad: RunRequest[] = [];
  private badSeen = 0;
  private readonly rnd: () => number;
  readonly traceIds: Record<TraceIdSource, number> & { sampled: number } = {
    sent: 0,
    traceresponse: 0,
    none: 0,
    sampled: 0,
  };

  constructor(
    private readonly keep = 100,
    seed = 1
  ) {
    this.rnd = seededRandom(seed ^ 0x1ed9e);
  }

  /**
   * `served`: answered (ok or degraded), a candidate for the slowest; `failed`: not ok (degraded, error, timeout).
   * `build` runs only for a request that is kept, so the common case allocates nothing.
   */
  add(
    e2eMs: number,
    served: boolean,
    failed: boolean,
    source: TraceIdSource,
    sampled: boolean,
    build: () => RunRequest
  ): void {
    this.traceIds[source]++;
    if (sampled) this.traceIds.sampled++;
    let req: RunRequest | undefined;
    if (served && e2eMs > this.slowFloor) {
      this.slow.push((req = build()));
      if (this.slow.length >= 2 * this.keep) this.trimSlow();
    }
    if (failed) {
      this.badSeen++;
      if (this.bad.length < this.keep) this.bad.push(req ?? build());
      else {
        const j = Math.floor(this.rnd() * this.badSeen);
        if (j < this.keep) this.bad[j] = req ?? build();
      }
    }
  }

  private trimSlow(): void {
    this.slow.sort((a, b) => b.e2eMs - a.e2eMs);
    this.slow.length = Math.min(this.slow.length, this.keep);
    if (this.slow.length === this.keep) this.slowFloor = this.slow[this.keep - 1].e2eMs;
  }

  /** Slowest first. */
  slowest(): RunRequest[] {
    this.trimSlow();
    return [...this.slow];
  }

  /** In the order they started. */
  failed(): RunRequest[] {
    return [...this.bad].sort((a, b) => a.startMs - b.startMs);
  }
}
