/**
 * Events the per-event budget kept out of /events (they are in the metrics all the same), per kernel second, type,
 * pid and pod, so an /events answer can say how many events of its window it does not hold. Bounded: past `max`
 * entries the oldest go, and a window reaching before the oldest kept entry is reported as not fully known.
 */
import type { KernelEventType } from '../../../contract';
import type { EventFilter } from './ring';

export interface SuppressedRecord {
  /** Epoch ms of the start of the (kernel) second the events were suppressed in. */
  ts: number;
  type: KernelEventType;
  /** Over the notable class's budget. */
  notable: boolean;
  pid: number;
  pod?: string;
  count: number;
}

export class SuppressedLog {
  private readonly buf: SuppressedRecord[] = [];
  private head = 0;
  total = 0;
  /** Start of the oldest second still fully known (after an eviction). */
  knownSince = -Infinity;

  constructor(readonly max = 100_000) {}

  get size(): number {
    return this.buf.length - this.head;
  }

  add(r: SuppressedRecord): void {
    this.total += r.count;
    this.buf.push(r);
    if (this.size > this.max) {
      const gone = this.buf[this.head++];
      this.knownSince = Math.max(this.knownSince, gone.ts + 1000);
      if (this.head > 4096 && this.head * 2 > this.buf.length) {
        this.buf.splice(0, this.head);
        this.head = 0;
      }
    }
  }

  /**
   * Suppressed events matching the filter's window (a second overlapping it counts whole: an upper bound at the
   * edges), types, pid and pod. A traceId filter cannot narrow it (suppressed events carry no trace id).
   */
  count(f: EventFilter): number {
    let n = 0;
    for (let i = this.head; i < this.buf.length; i++) {
      const r = this.buf[i];
      if (f.from !== undefined && r.ts + 1000 <= f.from) continue;
      if (f.to !== undefined && r.ts > f.to) continue;
      if (f.types && !f.types.includes(r.type)) continue;
      if (f.pid !== undefined && r.pid !== f.pid) continue;
      if (f.pod !== undefined && r.pod !== f.pod) continue;
      if (f.notable && !r.notable) continue;
      n += r.count;
    }
    return n;
  }
}
