/**
 * Bounded ring of recent kernel events: fixed capacity, the oldest event is overwritten when full and counted as
 * evicted, so an event storm never grows memory. Every event gets a sequence number (`seq`) as it enters: consecutive
 * within this process and starting at the start time in µs, so a later exporter process on the node only ever hands
 * out larger ones. A consumer resumes from the last seq it got (`after`), and the ring says exactly when it no longer
 * holds what came next.
 */
import type { KernelEvent, KernelEventType } from '../../../contract';

export interface EventFilter {
  from?: number;
  to?: number;
  pod?: string;
  pid?: number;
  types?: KernelEventType[];
  traceId?: string;
  /** Only events recorded as notable. */
  notable?: boolean;
}

export function matches(e: KernelEvent, f: EventFilter): boolean {
  if (f.from !== undefined && e.ts < f.from) return false;
  if (f.to !== undefined && e.ts > f.to) return false;
  if (f.pod !== undefined && e.pod !== f.pod) return false;
  if (f.pid !== undefined && e.pid !== f.pid) return false;
  if (f.types && !f.types.includes(e.type)) return false;
  if (f.traceId !== undefined && e.traceId !== f.traceId) return false;
  if (f.notable && e.notable !== true) return false;
  return true;
}

/** Why a resume position is not followed by what the ring holds. */
export type GapReason = 'evicted' | 'exporter_restarted' | 'ahead';

export interface Gap {
  /** The position asked for. */
  after: number;
  /** The oldest seq the ring holds (or the next one, when empty): where the answer continues. */
  resumedAt: number;
  reason: GapReason;
  /** Events (of every type, matching or not) that came after `after` and are gone; null when not knowable. */
  missed: number | null;
}

export class EventRing {
  private readonly buf: Array<KernelEvent | undefined>;
  private next = 0;
  private count = 0;
  evicted = 0;
  /** The first seq this process handed out. */
  readonly startSeq: number;
  private nextSeq: number;

  constructor(
    readonly capacity: number,
    startSeq = Date.now() * 1000
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`ring capacity must be a positive integer, got ${capacity}`);
    this.buf = new Array(capacity);
    this.startSeq = startSeq;
    this.nextSeq = startSeq;
  }

  get size(): number {
    return this.count;
  }
  /** Oldest seq held (nextSeq when empty). */
  get firstSeq(): number {
    return this.nextSeq - this.count;
  }
  /** Newest seq handed out (startSeq - 1 before any). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Adds the event, giving it its seq. */
  push(e: KernelEvent): void {
    if (this.count === this.capacity) this.evicted++;
    else this.count++;
    e.seq = this.nextSeq++;
    this.buf[this.next] = e;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The event with this seq, if the ring still holds it. */
  bySeq(seq: number): KernelEvent | undefined {
    if (seq < this.firstSeq || seq > this.lastSeq) return undefined;
    return this.buf[(this.next - (this.nextSeq - seq) + this.capacity * 2) % this.capacity];
  }

  /**
   * Where a consumer that last got `after` continues, and the gap when the ring cannot continue right after it:
   * evicted (its position is older than the ring), exporter_restarted (a position from an earlier process: its events
   * after `after` are not knowable), ahead (a position this process never handed out).
   */
  resume(after: number): { cursor: number; gap?: Gap } {
    const first = this.firstSeq;
    if (after > this.lastSeq)
      return { cursor: first - 1, gap: { after, resumedAt: first, reason: 'ahead', missed: null } };
    if (after >= first - 1) return { cursor: after };
    if (after >= this.startSeq - 1)
      return { cursor: first - 1, gap: { after, resumedAt: first, reason: 'evicted', missed: first - 1 - after } };
    return { cursor: first - 1, gap: { after, resumedAt: first, reason: 'exporter_restarted', missed: null } };
  }

  /** Matching events, oldest first; at most `limit` (the newest ones), with `truncated` when more matched. */
  query(f: EventFilter, limit: number): { events: KernelEvent[]; truncated: boolean } {
    const out: KernelEvent[] = [];
    let truncated = false;
    // Walk newest → oldest so the limit keeps the most recent events.
    for (let i = 0; i < this.count; i++) {
      const e = this.buf[(this.next - 1 - i + this.capacity) % this.capacity]!;
      if (!matches(e, f)) continue;
      if (out.length === limit) {
        truncated = true;
        break;
      }
      out.push(e);
    }
    return { events: out.reverse(), truncated };
  }

  /**
   * Matching events after seq `after`, oldest first, at most `limit` (the oldest ones: a consumer pages forward);
   * `truncated` when more follow, `gap` when the ring could not continue right after `after`. `resumeAfter` is what
   * to ask next time: the last event returned when truncated, else the newest seq scanned (so a filter that matched
   * nothing still moves the consumer on, and it never sees a gap for events it would not have wanted).
   */
  since(
    after: number,
    f: EventFilter,
    limit: number
  ): { events: KernelEvent[]; truncated: boolean; gap?: Gap; resumeAfter: number } {
    const { cursor, gap } = this.resume(after);
    const out: KernelEvent[] = [];
    for (let s = cursor + 1; s <= this.lastSeq; s++) {
      const e = this.bySeq(s)!;
      if (!matches(e, f)) continue;
      if (out.length === limit) return { events: out, truncated: true, gap, resumeAfter: out[out.length - 1].seq! };
      out.push(e);
    }
    return { events: out, truncated: false, gap, resumeAfter: Math.max(this.lastSeq, cursor) };
  }
}
