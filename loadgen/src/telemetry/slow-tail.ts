/**
 * The slow tail of each operation (span name) in one process: whether a span lasted longer than the P99 of that
 * operation's last 1,000 spans. KeepErrorsSpanProcessor keeps the traces of such spans even when the head sampler
 * dropped them, so a run's slowest requests have their traces. Per operation and not a fixed threshold: each hop has
 * its own scale (an embedding call of 40 ms is slow where an LLM call of 40 ms is not), and so does every time scale
 * the chain runs at; about 1% of the dropped traces are kept this way.
 */
const WINDOW = 1000;
/** No verdict until an operation has this many spans (a P99 of a handful of spans is their maximum). */
const MIN_SEEN = 100;
/** The P99 is recomputed once per this many new spans of the operation (sorting 1,000 numbers each time). */
const EVERY = 100;
/** Operations tracked at most (span names are few; a bound against names built from ids). */
const MAX_OPERATIONS = 500;

interface Op {
  ring: Float64Array;
  seen: number;
  p99: number;
}

export class SlowTail {
  private readonly ops = new Map<string, Op>();

  /** Records one span of `name` that lasted `ms`; true when it is over the operation's P99 (once known). */
  observe(name: string, ms: number): boolean {
    let op = this.ops.get(name);
    if (!op) {
      if (this.ops.size >= MAX_OPERATIONS) return false;
      op = { ring: new Float64Array(WINDOW), seen: 0, p99: Infinity };
      this.ops.set(name, op);
    }
    const slow = op.seen >= MIN_SEEN && ms > op.p99;
    op.ring[op.seen % WINDOW] = ms;
    op.seen++;
    if (op.seen >= MIN_SEEN && op.seen % EVERY === 0) {
      const n = Math.min(op.seen, WINDOW);
      const xs = op.ring.slice(0, n).sort();
      op.p99 = xs[Math.min(n - 1, Math.ceil(0.99 * n) - 1)];
    }
    return slow;
  }

  /** The operation's current P99 (ms), or null before MIN_SEEN spans. */
  p99(name: string): number | null {
    const op = this.ops.get(name);
    return op && op.seen >= MIN_SEEN ? op.p99 : null;
  }
}
