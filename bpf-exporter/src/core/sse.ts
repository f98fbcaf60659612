/**
 * Server-sent events of kernel events, resumable from the ring (protocol in bpf-exporter/README.md, "Event stream").
 * Each client has a cursor (the last seq it was considered for) and reads the ring from there: live events and a
 * resume backlog go the same way, so nothing is sent twice or skipped. A client's socket buffer is bounded: while it
 * is full the client simply stops advancing (the ring is its buffer); when the ring evicts events the client has not
 * reached, it is closed with `event: dropped` and a reason instead, and can resume with its Last-Event-ID (getting an
 * `event: gap` that says how many it missed). Subscribers are capped. Events over the per-event budget are reported
 * as `event: suppressed` (not part of the sequence).
 */
import type { Response } from 'express';
import { type EventFilter, type EventRing, type Gap, matches } from './ring';
import type { SuppressedRecord } from './suppressed';

/** Bytes a client may have waiting in its socket before it stops advancing. */
export const MAX_BUFFERED_BYTES = 256 * 1024;
/** A client closed as too slow gets this long to read its last event before the socket is destroyed. */
const CLOSE_GRACE_MS = 10_000;

interface Client {
  res: Response;
  filter: EventFilter;
  cursor: number;
  waitingDrain: boolean;
  closed: boolean;
}

export interface SseHubOptions {
  ring: EventRing;
  maxClients: number;
  heartbeatMs?: number;
}

export class SseHub {
  private readonly clients = new Set<Client>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly ring: EventRing;
  readonly maxClients: number;
  /** Clients closed for falling behind the ring. */
  dropped = 0;
  /** Subscriptions refused at the cap. */
  refused = 0;

  constructor(opts: SseHubOptions) {
    this.ring = opts.ring;
    this.maxClients = opts.maxClients;
    // The heartbeat carries the client's cursor as its id, so a filtered client that saw nothing still resumes from
    // where the stream had got to (and never reports a gap for events it would not have wanted).
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) if (!c.waitingDrain) c.res.write(`: keep-alive\nid: ${c.cursor}\n\n`);
    }, opts.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.clients.size;
  }
  get full(): boolean {
    return this.clients.size >= this.maxClients;
  }

  /**
   * A new subscriber; `after`: the last seq it has (Last-Event-ID or ?after=), undefined = live from now. The caller
   * checks `full` first (503).
   */
  add(res: Response, filter: EventFilter, after: number | undefined, hello: Record<string, unknown>): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    let cursor = this.ring.lastSeq;
    let gap: Gap | undefined;
    if (after !== undefined) ({ cursor, gap } = this.ring.resume(after));
    res.write(
      `retry: 2000\nevent: hello\ndata: ${JSON.stringify({ ...hello, firstSeq: this.ring.firstSeq, lastSeq: this.ring.lastSeq, after: after ?? null })}\n\n`
    );
    if (gap) res.write(`event: gap\ndata: ${JSON.stringify(gap)}\n\n`);
    const client: Client = { res, filter, cursor, waitingDrain: false, closed: false };
    this.clients.add(client);
    res.on('close', () => {
      client.closed = true;
      this.clients.delete(client);
    });
    this.pump(client);
  }

  /** The ring got new events: every client reads on from its cursor. */
  publish(): void {
    for (const c of this.clients) this.pump(c);
  }

  private pump(c: Client): void {
    if (c.closed) return;
    const ring = this.ring;
    // Behind the oldest event held, even while its socket is still full: it cannot catch up without a gap.
    if (c.cursor + 1 < ring.firstSeq) return this.drop(c, 'slow_consumer', ring.firstSeq - 1 - c.cursor);
    if (c.waitingDrain) return;
    while (c.cursor < ring.lastSeq) {
      if (c.res.writableLength > MAX_BUFFERED_BYTES) {
        c.waitingDrain = true;
        c.res.once('drain', () => {
          c.waitingDrain = false;
          this.pump(c);
        });
        return;
      }
      const seq = c.cursor + 1;
      const e = ring.bySeq(seq)!;
      c.cursor = seq;
      if (matches(e, c.filter)) c.res.write(`id: ${seq}\nevent: kernel\ndata: ${JSON.stringify(e)}\n\n`);
    }
  }

  /** Closes a client that fell further behind than the ring holds, saying so (it may resume and get the gap). */
  private drop(c: Client, reason: 'slow_consumer', missed: number): void {
    this.dropped++;
    c.closed = true;
    this.clients.delete(c);
    c.res.end(
      `event: dropped\ndata: ${JSON.stringify({ reason, lastSeq: c.cursor, missed, message: `the client fell ${missed} events behind what the ring holds; resume with Last-Event-ID: ${c.cursor}` })}\n\n`
    );
    setTimeout(() => c.res.destroy(), CLOSE_GRACE_MS).unref();
  }

  /**
   * Events the per-event budget kept out of the stream (counted in the metrics): each client whose filter they match
   * gets `event: suppressed` with how many and the window (epoch ms) they fall in.
   */
  publishSuppressed(entries: SuppressedRecord[]): void {
    if (!this.clients.size || !entries.length) return;
    for (const c of this.clients) {
      if (c.waitingDrain) continue;
      let n = 0;
      let from = Infinity;
      let to = -Infinity;
      for (const r of entries) {
        if (c.filter.types && !c.filter.types.includes(r.type)) continue;
        if (c.filter.pid !== undefined && r.pid !== c.filter.pid) continue;
        if (c.filter.pod !== undefined && r.pod !== c.filter.pod) continue;
        if (c.filter.notable && !r.notable) continue;
        n += r.count;
        from = Math.min(from, r.ts);
        to = Math.max(to, r.ts + 1000);
      }
      if (n) c.res.write(`event: suppressed\ndata: ${JSON.stringify({ suppressed: n, from, to })}\n\n`);
    }
  }

  close(): void {
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }
}
