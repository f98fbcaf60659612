/**
 * One exporter's notable stream (`GET /events/stream?class=notable`), read into a sink (the keeper's queue, as the
 * service offers it): resume with `Last-Event-ID` from the saved position; back-pressure (a full sink stops the
 * reading until it drains, so the exporter's ring is the buffer); gaps (`gap`, `suppressed`, a full queue) recorded
 * as windows without evidence; positions saved once everything offered before them is written. It is given its sink,
 * its HTTP request and its token, nothing of the service, so its gap and resume logic is tested against a stream
 * served in-process (tests/unit/proxy/evidence-stream-reader.test.ts).
 */
import type { Dispatcher } from 'undici';
import type pino from 'pino';
import { type KernelEvent } from '../../../contract';
import type { Database } from '../db/database';
import * as streams from '../db/kernel-stream-repo';
import { looksValid } from '../sources/exporters';
import { SseParser, type SseMessage } from '../../../contract/sse';

/** A stream with no message (events or the exporter's 15 s keep-alive) for this long is taken as dead. */
const STREAM_IDLE_MS = 45_000;
/** Events reach the ring up to this long after they happened (the exporter's flushes): a keep-alive's time less it. */
const KEEPALIVE_SLACK_MS = 2000;
/** Suppressed-event reports closer than this are one gap record. */
const SUPPRESSED_MERGE_MS = 30_000;

/** Where a reader's events go: the keeper's queue, as the service offers it. */
export interface EvidenceSink {
  /** Queues a batch; `ok` false: stop reading until `drained()`. `lost`: events of the batch it could not queue. */
  offer(events: KernelEvent[]): { ok: boolean; lost: number };
  /** Resolves once the queue has room again. */
  drained(): Promise<void>;
  /** Events offered so far, by every reader (a position is saved once everything offered before it is written). */
  readonly offered: number;
}

/** What a reader is given: its sink, the HTTP request (the service's undici agent), the token, its deadlines. */
export interface StreamReaderDeps {
  sink: EvidenceSink;
  request: (o: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  /** HOPSCOPE_EXPORTER_TOKEN. */
  token?: string;
  /** Deadline of a connect. */
  timeoutMs: number;
  /** Stream idle deadline (tests shorten it). */
  idleMs?: number;
  log: pino.Logger;
}

export interface ExporterStreamState {
  exporter: string;
  node: string | null;
  connected: boolean;
  /** Last stream position handled, and the one saved (everything up to it is in the database). */
  lastSeq: number | null;
  savedSeq: number | null;
  /** Events the exporter held beyond our position when we (re)connected, not yet read since. */
  behind: number;
  /** Since the last message (event or keep-alive). */
  idleMs: number | null;
  reconnects: number;
  gaps: number;
  lastError?: string;
}

interface Checkpoint {
  offered: number;
  seq: number;
  seenMs: number;
}

/** One exporter's notable stream, read into the keeper. */
export class StreamReader {
  node: string | null = null;
  connected = false;
  lastSeq: number | null = null;
  savedSeq: number | null = null;
  /**
   * The time of the stream position: the last event's ts, or for a keep-alive its arrival less the exporter's flush
   * delay. Events after the position happened after it, so a gap there starts at it.
   */
  positionTs = 0;
  firstMs: number;
  private helloLastSeq = 0;
  lastMessageMs: number | null = null;
  reconnects = 0;
  gaps = 0;
  lastError?: string;
  private checkpoints: Checkpoint[] = [];
  private stopped = false;
  private abort = new AbortController();
  private loop?: Promise<void>;
  /** A gap whose end is the next message. */
  private openGap?: Omit<streams.EvidenceGap, 'toMs'>;
  private suppressed?: streams.EvidenceGap & { lastMs: number };
  private unsavedGaps: streams.EvidenceGap[] = [];

  constructor(
    readonly url: string,
    private deps: StreamReaderDeps,
    saved: streams.StreamPosition | undefined
  ) {
    if (saved) {
      this.lastSeq = saved.lastSeq;
      this.savedSeq = saved.lastSeq;
      this.positionTs = saved.lastSeenMs;
      this.node = saved.node;
    }
    this.firstMs = saved?.firstMs ?? Date.now();
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    let backoff = 500;
    while (!this.stopped) {
      let retryAfterMs: number | undefined;
      try {
        retryAfterMs = await this.readOnce(() => {
          backoff = 500;
        });
      } catch (err) {
        if (this.stopped) break;
        this.lastError = (err as Error).message;
        retryAfterMs = (err as { retryAfterMs?: number }).retryAfterMs;
        this.deps.log.debug({ exporter: this.url, err: this.lastError }, 'kernel evidence: stream ended; reconnecting');
      }
      this.connected = false;
      this.closeOpenGap(Date.now());
      if (this.stopped) break;
      this.reconnects++;
      await this.sleep(retryAfterMs ?? backoff);
      backoff = Math.min(30_000, backoff * 2);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true }
      );
    });
  }

  /** One connection, read until it ends. Returns a wait before the next one (dropped: none; 503: Retry-After). */
  private async readOnce(connected: () => void): Promise<number | undefined> {
    const svc = this.deps;
    const fromStart = this.lastSeq === null;
    // What a gap at the resume position starts at: the last message read (this process), else when it was saved.
    const resumeFromMs = this.positionTs || this.firstMs;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (svc.token) headers.authorization = `Bearer ${svc.token}`;
    if (!fromStart) headers['last-event-id'] = String(this.lastSeq);
    // No position yet: everything the ring holds (after=0), so the evidence starts as far back as the ring does.
    const url = `${this.url}/events/stream?class=notable${fromStart ? '&after=0' : ''}`;
    const res = await svc.request({
      origin: new URL(this.url).origin,
      path: new URL(url).pathname + new URL(url).search,
      method: 'GET',
      headers,
      signal: this.abort.signal,
      headersTimeout: svc.timeoutMs,
      bodyTimeout: svc.idleMs ?? STREAM_IDLE_MS,
    });
    if (res.statusCode !== 200) {
      const text = (await res.body.text()).slice(0, 200);
      const ra = Number(res.headers['retry-after']);
      throw Object.assign(new Error(`HTTP ${res.statusCode} ${text}`), {
        retryAfterMs: Number.isFinite(ra) && ra > 0 ? ra * 1000 : undefined,
      });
    }
    const ctype = String(res.headers['content-type'] ?? '');
    if (!ctype.includes('text/event-stream')) {
      await res.body.dump().catch(() => {});
      throw new Error(`answered ${ctype || 'no content type'}, not an event stream (is it a bpf-exporter?)`);
    }
    this.connected = true;
    this.lastError = undefined;
    connected();
    const parser = new SseParser();
    const messages: SseMessage[] = [];
    let dropped = false;
    res.body.setEncoding('utf8');
    for await (const chunk of res.body as AsyncIterable<string>) {
      messages.length = 0;
      parser.push(chunk, messages);
      const batch: KernelEvent[] = [];
      for (const m of messages) {
        this.lastMessageMs = Date.now();
        const ev = m.event ?? (m.data !== undefined ? 'message' : undefined);
        if (ev === 'kernel' && m.data !== undefined) {
          const e = parseJson(m.data);
          const seq = Number(m.id);
          if (looksValid(e)) {
            batch.push(e);
            this.closeOpenGap(e.ts);
          }
          if (Number.isSafeInteger(seq)) this.lastSeq = seq;
          if (looksValid(e) && e.ts > this.positionTs) this.positionTs = e.ts;
        } else if (ev === 'hello') {
          const h = parseJson(m.data) as { node?: unknown; lastSeq?: unknown; after?: unknown } | undefined;
          if (typeof h?.node === 'string') this.node = h.node;
          if (typeof h?.lastSeq === 'number') this.helloLastSeq = h.lastSeq;
        } else if (ev === 'gap') {
          // A first read from the ring's start (after=0) is no gap of ours.
          const g = parseJson(m.data) as { reason?: unknown; missed?: unknown } | undefined;
          if (
            !fromStart &&
            g &&
            typeof g.reason === 'string' &&
            (streams.GAP_REASONS as readonly string[]).includes(g.reason)
          ) {
            this.openGap = {
              exporter: this.url,
              node: this.node,
              fromMs: resumeFromMs,
              reason: g.reason as streams.GapReason,
              missed: typeof g.missed === 'number' ? g.missed : null,
            };
          }
        } else if (ev === 'suppressed') {
          const s = parseJson(m.data) as { suppressed?: unknown; from?: unknown; to?: unknown } | undefined;
          if (s && typeof s.from === 'number' && typeof s.to === 'number' && typeof s.suppressed === 'number')
            this.noteSuppressed(s.from, s.to, s.suppressed);
        } else if (ev === 'dropped') {
          dropped = true; // the exporter closes now; the next connection gets a gap with the exact count
        } else if (m.id !== undefined && m.event === undefined && m.data === undefined) {
          // A keep-alive carries how far the stream has been read for us (filtered events included).
          this.closeOpenGap(Date.now());
          const seq = Number(m.id);
          if (Number.isSafeInteger(seq)) this.lastSeq = seq;
          this.positionTs = Math.max(this.positionTs, Date.now() - KEEPALIVE_SLACK_MS);
        }
      }
      if (batch.length || messages.length) {
        const ok = this.offer(batch);
        if (this.lastSeq !== null)
          this.checkpoints.push({ offered: svc.sink.offered, seq: this.lastSeq, seenMs: this.positionTs });
        if (this.checkpoints.length > 10_000) this.checkpoints.splice(0, this.checkpoints.length - 10_000);
        if (!ok) await svc.sink.drained(); // stop reading: the socket fills and the exporter holds our place
      }
      if (this.stopped) break;
    }
    return dropped ? 0 : undefined;
  }

  private closeOpenGap(toMs: number): void {
    const g = this.openGap;
    if (!g) return;
    this.openGap = undefined;
    this.gaps++;
    this.unsavedGaps.push({ ...g, toMs: Math.max(g.fromMs, toMs) });
  }

  private noteSuppressed(from: number, to: number, n: number): void {
    const s = this.suppressed;
    if (s && from <= s.toMs + SUPPRESSED_MERGE_MS) {
      s.toMs = Math.max(s.toMs, to);
      s.missed = (s.missed ?? 0) + n;
      s.lastMs = Date.now();
      return;
    }
    if (s) this.unsavedGaps.push(s);
    this.gaps++;
    this.suppressed = {
      exporter: this.url,
      node: this.node,
      fromMs: from,
      toMs: to,
      reason: 'suppressed',
      missed: n,
      lastMs: Date.now(),
    };
  }

  /** Hands a batch to the sink; false: stop reading until it drains. What it could not queue is a gap. */
  private offer(events: KernelEvent[]): boolean {
    if (!events.length) return true;
    const { ok, lost } = this.deps.sink.offer(events);
    if (lost > 0) this.noteQueueFull(events, lost);
    return ok;
  }

  /** A range of offered events the keeper could not queue. */
  private noteQueueFull(events: KernelEvent[], lost: number): void {
    let from = Infinity;
    let to = -Infinity;
    for (const e of events) {
      if (e.ts < from) from = e.ts;
      if (e.ts > to) to = e.ts;
    }
    if (from > to) return;
    this.gaps++;
    this.unsavedGaps.push({
      exporter: this.url,
      node: this.node,
      fromMs: from,
      toMs: to,
      reason: 'queue_full',
      missed: lost,
    });
  }

  /** Saves the gaps seen and the position whose events are all written (`settled` events of the keeper). */
  async checkpoint(db: Database, settled: number, final = false): Promise<void> {
    const now = Date.now();
    if (this.suppressed && (final || now - this.suppressed.lastMs > SUPPRESSED_MERGE_MS)) {
      const { lastMs: _l, ...g } = this.suppressed;
      this.unsavedGaps.push(g);
      this.suppressed = undefined;
    }
    while (this.unsavedGaps.length) {
      await streams.recordGap(db, this.unsavedGaps[0]);
      this.unsavedGaps.shift();
    }
    let next: Checkpoint | undefined;
    let i = 0;
    while (i < this.checkpoints.length && this.checkpoints[i].offered <= settled) next = this.checkpoints[i++];
    if (!next) return;
    this.checkpoints.splice(0, i);
    if (next.seq === this.savedSeq) return;
    await streams.saveStreamPosition(db, {
      exporter: this.url,
      node: this.node,
      lastSeq: next.seq,
      lastSeenMs: next.seenMs,
      firstMs: this.firstMs,
    });
    this.savedSeq = next.seq;
  }

  state(): ExporterStreamState {
    return {
      exporter: this.url,
      node: this.node,
      connected: this.connected,
      lastSeq: this.lastSeq,
      savedSeq: this.savedSeq,
      behind: this.lastSeq === null ? 0 : Math.max(0, this.helloLastSeq - this.lastSeq),
      idleMs: this.lastMessageMs === null ? null : Date.now() - this.lastMessageMs,
      reconnects: this.reconnects,
      gaps: this.gaps,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }
}

export function parseJson(s: string | undefined): unknown {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
