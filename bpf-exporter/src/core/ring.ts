/**
 * Bounded ring of recent kernel events: fixed capacity, the oldest event is overwritten when full and counted as
 * evicted, so an event storm never grows memory.
 */
import type { KernelEvent, KernelEventType } from '../../../contract';

export interface EventFilter {
  from?: number;
  to?: number;
  pod?: string;
  pid?: number;
  types?: KernelEventType[];
  traceId?: string;
}

export function matches(e: KernelEvent, f: EventFilter): boolean {
  if (f.from !== undefined && e.ts < f.from) return false;
  if (f.to !== undefined && e.ts > f.to) return false;
  if (f.pod !== undefined && e.pod !== f.pod) return false;
  if (f.pid !== undefined && e.pid !== f.pid) return false;
  if (f.types && !f.types.includes(e.type)) return false;
  if (f.traceId !== undefined && e.traceId !== f.traceId) return false;
  return true;
}

export class EventRing {
  private readonly buf: Array<KernelEvent | undefined>;
  private next = 0;
  private count = 0;
  evicted = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`ring capacity must be a positive integer, got ${capacity}`);
    this.buf = new Array(capacity);
  }

  get size(): number { return this.count; }

  push(e: KernelEvent): void {
    if (this.count === this.capacity) this.evicted++;
    else this.count++;
    this.buf[this.next] = e;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Matching events, oldest first; at most `limit` (the newest ones), with `truncated` when more matched. */
  query(f: EventFilter, limit: number): { events: KernelEvent[]; truncated: boolean } {
    const out: KernelEvent[] = [];
    let truncated = false;
    // Walk newest → oldest so the limit keeps the most recent events.
    for (let i = 0; i < this.count; i++) {
      const e = this.buf[(this.next - 1 - i + this.capacity) % this.capacity]!;
      if (!matches(e, f)) continue;
      if (out.length === limit) { truncated = true; break; }
      out.push(e);
    }
    return { events: out.reverse(), truncated };
  }
}
