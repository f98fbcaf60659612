/**
 * Kernel events indexed for joins: by pod (sorted by time, binary-searched per span window), by pid for events the
 * exporter could not map to a pod, by trace id for events whose probe saw a traceparent, and TCP link events by
 * the address:port they were sent to (whoever sent them: a caller outside the trace, e.g. an ingress or a client on the
 * node, has no span to join by).
 */
import { endpointKey, type KernelEvent, type KernelEventType } from '../../../contract';
import type { RcaConfig } from './config';

/** Event indexes of one pod, pid or destination in time order, with their times. */
export interface EventList {
  ts: Float64Array;
  idx: Int32Array;
  /** Where the last search ended: the next one (a later span on the same pod, usually) starts there. Only a hint. */
  hint: number;
}

export interface KernelIndex {
  events: KernelEvent[];
  byPod: Map<string, EventList>;
  byPid: Map<number, EventList>;
  byTrace: Map<string, number[]>;
  /** TCP link events (retransmits, connects) by destination `address:port`. */
  byDest: Map<string, EventList>;
  /** Longest event duration: widens the window search so long events that started earlier still join. */
  maxDurationMs: number;
}

function sortedIndex(list: number[], events: KernelEvent[]): EventList {
  // Exporters answer in time order: check before paying for a sort.
  let ordered = true;
  for (let k = 1; k < list.length && ordered; k++) ordered = events[list[k - 1]].ts <= events[list[k]].ts;
  if (!ordered) list.sort((a, b) => events[a].ts - events[b].ts || a - b);
  // Plain loops: TypedArray.from with a mapping function is several times slower (10,000 events per call).
  const ts = new Float64Array(list.length);
  const idx = new Int32Array(list.length);
  for (let k = 0; k < list.length; k++) {
    idx[k] = list[k];
    ts[k] = events[list[k]].ts;
  }
  return { ts, idx, hint: 0 };
}

/** TCP events about one connection's segments: they carry the address:port they were sent to. */
export const LINK_EVENT_TYPES: ReadonlySet<KernelEventType> = new Set<KernelEventType>([
  'tcp_retransmit',
  'tcp_connect',
  'tcp_connect_fail',
]);

export function indexKernelEvents(events: KernelEvent[]): KernelIndex {
  const pods = new Map<string, number[]>();
  const dests = new Map<string, number[]>();
  const pids = new Map<number, number[]>();
  const byTrace = new Map<string, number[]>();
  let maxDurationMs = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e.pod) {
      let l = pods.get(e.pod);
      if (!l) pods.set(e.pod, (l = []));
      l.push(i);
    } else {
      let l = pids.get(e.pid);
      if (!l) pids.set(e.pid, (l = []));
      l.push(i);
    }
    const dest = LINK_EVENT_TYPES.has(e.type) ? endpointKey(e.detail.daddr, e.detail.dport) : undefined;
    if (dest) {
      let l = dests.get(dest);
      if (!l) dests.set(dest, (l = []));
      l.push(i);
    }
    if (e.traceId) {
      let l = byTrace.get(e.traceId);
      if (!l) byTrace.set(e.traceId, (l = []));
      l.push(i);
    }
    if (e.durationMs && e.durationMs > maxDurationMs) maxDurationMs = e.durationMs;
  }
  const byPod = new Map<string, EventList>();
  for (const [k, l] of pods) byPod.set(k, sortedIndex(l, events));
  const byPid = new Map<number, EventList>();
  for (const [k, l] of pids) byPid.set(k, sortedIndex(l, events));
  const byDest = new Map<string, EventList>();
  for (const [k, l] of dests) byDest.set(k, sortedIndex(l, events));
  return { events, byPod, byPid, byTrace, byDest, maxDurationMs };
}

/** How a kernel event joined a hop: inside a span's window on its pod, by the trace id a probe saw, or sent to its port. */
export type KernelJoin = 'window' | 'trace' | 'link';
const JOIN_CODES: readonly KernelJoin[] = ['window', 'window', 'trace', 'link'];
const LISTED = 0x80;

/**
 * The kernel events joined to one hop (by index into the index's `events`) and how: a flag per event and a list in
 * first-join order, so the thousands of joins of a big trace cost no hashing. Deleted events stay listed, flagged 0.
 */
export class JoinedEvents {
  private flags = new Uint8Array(0);
  private readonly listed: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(e: number): KernelJoin | undefined {
    const f = e < this.flags.length ? this.flags[e] & 3 : 0;
    return f ? JOIN_CODES[f] : undefined;
  }

  has(e: number): boolean {
    return e < this.flags.length && (this.flags[e] & 3) !== 0;
  }

  set(e: number, how: KernelJoin): void {
    if (e >= this.flags.length) {
      const grown = new Uint8Array(Math.max(1024, e + 1, this.flags.length * 2));
      grown.set(this.flags);
      this.flags = grown;
    }
    const f = this.flags[e];
    if (!(f & 3)) this.count++;
    if (!(f & LISTED)) this.listed.push(e);
    this.flags[e] = LISTED | (how === 'trace' ? 2 : how === 'link' ? 3 : 1);
  }

  delete(e: number): void {
    if (!this.has(e)) return;
    this.flags[e] &= LISTED;
    this.count--;
  }

  *entries(): IterableIterator<[number, KernelJoin]> {
    for (const e of this.listed) {
      const f = this.flags[e] & 3;
      if (f) yield [e, JOIN_CODES[f]];
    }
  }

  [Symbol.iterator](): IterableIterator<[number, KernelJoin]> {
    return this.entries();
  }

  /** Calls `fn` for every joined event (no iterator objects: the scoring loop runs over thousands). */
  forEach(fn: (how: KernelJoin, e: number) => void): void {
    for (const e of this.listed) {
      const f = this.flags[e] & 3;
      if (f) fn(JOIN_CODES[f], e);
    }
  }
}

/** First position in `l.ts` not below `x`: galloping from the last search's position, else a plain binary search. */
function lowerBound(l: EventList, x: number): number {
  const a = l.ts;
  let lo = 0;
  let hi = a.length;
  const h = l.hint;
  if (h > 0 && h <= a.length && a[h - 1] < x) {
    // x is right of the hint: widen a window step by step until it holds x.
    lo = h;
    let step = 1;
    while (lo + step < a.length && a[lo + step] < x) {
      lo += step + 1;
      step *= 2;
    }
    hi = Math.min(a.length, lo + step);
  } else if (h < a.length && a[h] >= x) hi = h;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  l.hint = lo;
  return lo;
}

/** Event indexes of `pod` (or, failing that, `pid`) whose [ts − duration, ts] overlaps [from, to] ± slack. */
export function eventsInWindow(
  k: KernelIndex,
  pod: string,
  pid: number | undefined,
  from: number,
  to: number,
  slackMs: number,
  out: number[]
): void {
  const byPod = k.byPod.get(pod);
  if (byPod) overlapping(k, byPod, from - slackMs, to + slackMs, out);
  const byPid = pid === undefined ? undefined : k.byPid.get(pid);
  if (byPid) overlapping(k, byPid, from - slackMs, to + slackMs, out);
}

function overlapping(k: KernelIndex, l: EventList, from: number, to: number, out: number[]): void {
  const hi = to + k.maxDurationMs;
  for (let j = lowerBound(l, from); j < l.ts.length && l.ts[j] <= hi; j++) {
    const e = k.events[l.idx[j]];
    if (e.ts - (e.durationMs ?? 0) <= to) out.push(l.idx[j]);
  }
}

/** Indexes of TCP link events sent to `dest` (`address:port`) whose [ts − duration, ts] overlaps [from, to]. */
export function linkEventsTo(k: KernelIndex, dest: string, from: number, to: number, out: number[]): void {
  const l = k.byDest.get(dest);
  if (l) overlapping(k, l, from, to, out);
}

/** How bad one event is, 0 (routine) … 1, and why; routine events (a fast handshake) do not count as evidence. */
export function eventSeverity(e: KernelEvent, c: RcaConfig): number {
  switch (e.type) {
    case 'gpu_alloc_fail':
      return 1;
    case 'nccl_slow_collective':
      return 0.9; // the exporter reports a collective only past its threshold (SLOW_NCCL_NS)
    case 'tcp_connect_fail':
      return 0.6;
    case 'tcp_retransmit':
      return 0.3;
    case 'tls_handshake':
      return (e.durationMs ?? 0) >= c.slowTlsMs ? 0.5 : 0;
    case 'tcp_connect':
      return (e.durationMs ?? 0) >= c.slowConnectMs ? 0.4 : 0;
    default:
      return 0;
  }
}
