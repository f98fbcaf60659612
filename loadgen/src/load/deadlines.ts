/**
 * Request deadlines: one sweeper over the requests in flight instead of a timer each. Entries leave the set when
 * their request ends, so they die young (no old-generation garbage, hence no long GC pauses that would delay the
 * schedule).
 */

export interface Deadline {
  at: number;
  ac: AbortController;
}

export class Deadlines {
  private readonly live = new Set<Deadline>();
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number) {
    this.timer = setInterval(
      () => {
        const now = performance.now();
        for (const d of this.live)
          if (d.at <= now) {
            this.live.delete(d);
            d.ac.abort(new DOMException('request timed out', 'TimeoutError'));
          }
      },
      Math.max(5, Math.min(50, timeoutMs / 10))
    );
  }

  add(d: Deadline): void {
    this.live.add(d);
  }

  delete(d: Deadline): void {
    this.live.delete(d);
  }

  /** Cuts every request still in flight with `reason` (an interrupt's grace is over). */
  abortAll(reason: Error): void {
    for (const d of this.live) d.ac.abort(reason);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
