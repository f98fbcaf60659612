/**
 * Server-sent events fan-out of live kernel events. A client that does not keep up is skipped (its drops counted and
 * reported in a `dropped` event) instead of buffering without bound; events over the per-event budget are reported in
 * a `suppressed` event.
 */
import type { Response } from 'express';
import type { KernelEvent } from '../../../contract';
import { matches, type EventFilter } from './ring';
import type { SuppressedRecord } from './suppressed';

const MAX_BUFFERED_BYTES = 1 << 20;

interface Client { res: Response; filter: EventFilter; dropped: number }

export class SseHub {
  private readonly clients = new Set<Client>();
  private readonly heartbeat: NodeJS.Timeout;
  dropped = 0;

  constructor(heartbeatMs = 15_000) {
    this.heartbeat = setInterval(() => { for (const c of this.clients) c.res.write(': keep-alive\n\n'); }, heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number { return this.clients.size; }

  add(res: Response, filter: EventFilter, hello: Record<string, unknown>): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(`event: hello\ndata: ${JSON.stringify(hello)}\n\n`);
    const client: Client = { res, filter, dropped: 0 };
    this.clients.add(client);
    res.on('close', () => this.clients.delete(client));
  }

  publish(e: KernelEvent): void {
    for (const c of this.clients) {
      if (!matches(e, c.filter)) continue;
      if (c.res.writableLength > MAX_BUFFERED_BYTES) {
        c.dropped++;
        this.dropped++;
        continue;
      }
      if (c.dropped) {
        c.res.write(`event: dropped\ndata: ${JSON.stringify({ dropped: c.dropped })}\n\n`);
        c.dropped = 0;
      }
      c.res.write(`event: kernel\ndata: ${JSON.stringify(e)}\n\n`);
    }
  }

  /**
   * Events the per-event budget kept out of the stream (counted in the metrics): each client whose filter they match
   * gets `event: suppressed` with how many and the window (epoch ms) they fall in.
   */
  publishSuppressed(entries: SuppressedRecord[]): void {
    if (!this.clients.size || !entries.length) return;
    for (const c of this.clients) {
      let n = 0; let from = Infinity; let to = -Infinity;
      for (const r of entries) {
        if (c.filter.types && !c.filter.types.includes(r.type)) continue;
        if (c.filter.pid !== undefined && r.pid !== c.filter.pid) continue;
        if (c.filter.pod !== undefined && r.pod !== c.filter.pod) continue;
        n += r.count; from = Math.min(from, r.ts); to = Math.max(to, r.ts + 1000);
      }
      if (n && c.res.writableLength <= MAX_BUFFERED_BYTES) c.res.write(`event: suppressed\ndata: ${JSON.stringify({ suppressed: n, from, to })}\n\n`);
    }
  }

  close(): void {
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }
}
