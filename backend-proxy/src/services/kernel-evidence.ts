/**
 * Kernel evidence kept past the exporters' rings. The proxy holding the `kernel-evidence-keeper` lease subscribes to
 * every exporter's notable stream (`GET /events/stream?class=notable`, the fixed and the DNS-discovered ones, with
 * HOPSCOPE_EXPORTER_TOKEN) and hands the events to the KernelEvidenceKeeper (../db), which writes them in batches:
 *
 * - back-pressure: when `offer()` says the queue is full the reader stops reading until `drained()`, so a slow
 *   database slows the stream (the exporter's ring is the buffer) instead of growing memory;
 * - resume: per exporter the position up to which every event is in the database (events offered, minus those still
 *   queued: the queue is first in, first out) is saved every second; a restarted proxy, or the one that takes the
 *   lease over, reconnects with `Last-Event-ID` there, and re-read events are deduplicated by the database;
 * - gaps: a `gap` (ring evicted, exporter restarted, unknown position), `suppressed` (over the exporter's per-event
 *   budget) or a full queue is recorded as a window without evidence, which a root cause then names;
 * - retention: HOPSCOPE_KERNEL_EVIDENCE_RETENTION, pruned every minute (the cut is remembered).
 *
 * The reading side (`forWindow`, used by root cause): the exporters' rings when every one of them still reaches back
 * to the window, else the rings merged with the kept events, with what is missing said (retention, gaps, since when
 * evidence is kept) and which source was used.
 */
import { Agent } from 'undici';
import type pino from 'pino';
import { type KernelEvent, type KernelEvidenceUsed, type SourceStatus } from '../../../contract';
import type { Database } from '../db/database';
import {
  KernelEvidenceKeeper,
  type KernelEvidenceKeeperOptions,
  type KernelEvidenceStats,
} from '../db/kernel-evidence-keeper';
import { queryKernelEvidence } from '../db/kernel-evidence-repo';
import * as streams from '../db/kernel-stream-repo';
import { currentLease, LeaseKeeper } from '../db/lease';
import { eventsFromAll, looksValid, type ExporterSource } from '../sources/exporters';
import { callJson } from '../sources/http';

export const KEEPER_LEASE = 'kernel-evidence-keeper';
/** Kept events one root cause reads at most. */
const KEPT_PAGE = 10_000;
/** A stream with no message (events or the exporter's 15 s keep-alive) for this long is taken as dead. */
const STREAM_IDLE_MS = 45_000;
/** Events reach the ring up to this long after they happened (the exporter's flushes): a keep-alive's time less it. */
const KEEPALIVE_SLACK_MS = 2000;
/** Suppressed-event reports closer than this are one gap record. */
const SUPPRESSED_MERGE_MS = 30_000;

const iso = (ms: number): string => new Date(ms).toISOString();

/** 7d, 36h, 90m, 45s: a retention as people write it. */
export function formatDuration(ms: number): string {
  for (const [unit, n] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= n && ms % n === 0) return `${ms / n}${unit}`;
  }
  return `${ms}ms`;
}

const GAP_WHY: Record<streams.GapReason, string> = {
  evicted: "the exporter's ring overwrote them before they were read",
  exporter_restarted: 'the exporter restarted meanwhile',
  ahead: 'the exporter did not know the resume position',
  suppressed: "over the exporter's per-event budget: counted in its metrics, not recorded one by one",
  queue_full: "the proxy's evidence queue was full",
};

/** The events a root cause reads for a window, and where they came from. */
export interface KernelWindow {
  events: KernelEvent[];
  sources: SourceStatus[];
  dropped: number;
  suppressed: number;
  invalid: number;
  truncated: boolean;
  used: KernelEvidenceUsed;
  /** What the kept evidence could not cover, and which source was used (for the answer's `missing`). */
  notes: string[];
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

export interface KernelEvidenceHealth {
  lease: string;
  holder: string | null;
  self: boolean;
  retention: string;
  /** Offered to the keeper and not yet written (the queue), and what the keeper counted. */
  keeper: KernelEvidenceStats;
  exporters: ExporterStreamState[];
  error?: string;
}

export interface KernelEvidenceOptions {
  db: Database;
  log: pino.Logger;
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
  retentionMs: number;
  leaseTtlMs: number;
  holder: string;
  /** HOPSCOPE_EXPORTER_TOKEN. */
  token?: string;
  /** Deadline of a connect / a ring lookup. */
  timeoutMs: number;
  keeper?: Partial<Omit<KernelEvidenceKeeperOptions, 'db' | 'log' | 'retentionMs'>>;
  /** How often positions are saved and the exporter list is followed. */
  checkpointMs?: number;
  /** Stream idle deadline (tests shorten it). */
  idleMs?: number;
}

interface Checkpoint {
  offered: number;
  seq: number;
  seenMs: number;
}

/** A minimal text/event-stream parser: complete messages out of arbitrary chunks. */
class SseParser {
  private buf = '';
  private id: string | undefined;
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: string, out: Array<{ id?: string; event?: string; data?: string }>): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\n|\r/)) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? nl + 2 : nl + 1);
      if (line === '') {
        if (this.id !== undefined || this.event !== undefined || this.data.length)
          out.push({ id: this.id, event: this.event, data: this.data.length ? this.data.join('\n') : undefined });
        this.id = undefined;
        this.event = undefined;
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    if (this.buf.length > 4 * 1024 * 1024) throw new Error('stream message over 4 MiB');
  }
}

/** One exporter's notable stream, read into the keeper. */
class StreamReader {
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
    private svc: KernelEvidenceService,
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
        this.svc.log.debug({ exporter: this.url, err: this.lastError }, 'kernel evidence: stream ended; reconnecting');
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
    const svc = this.svc;
    const fromStart = this.lastSeq === null;
    // What a gap at the resume position starts at: the last message read (this process), else when it was saved.
    const resumeFromMs = this.positionTs || this.firstMs;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (svc.token) headers.authorization = `Bearer ${svc.token}`;
    if (!fromStart) headers['last-event-id'] = String(this.lastSeq);
    // No position yet: everything the ring holds (after=0), so the evidence starts as far back as the ring does.
    const url = `${this.url}/events/stream?class=notable${fromStart ? '&after=0' : ''}`;
    const res = await svc.agent.request({
      origin: new URL(this.url).origin,
      path: new URL(url).pathname + new URL(url).search,
      method: 'GET',
      headers,
      signal: this.abort.signal,
      headersTimeout: svc.o.timeoutMs,
      bodyTimeout: svc.o.idleMs ?? STREAM_IDLE_MS,
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
    const messages: Array<{ id?: string; event?: string; data?: string }> = [];
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
        const ok = svc.offer(this, batch);
        if (this.lastSeq !== null)
          this.checkpoints.push({ offered: svc.offered, seq: this.lastSeq, seenMs: this.positionTs });
        if (this.checkpoints.length > 10_000) this.checkpoints.splice(0, this.checkpoints.length - 10_000);
        if (!ok) await svc.keeper.drained(); // stop reading: the socket fills and the exporter holds our place
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

  /** A range of offered events the keeper could not queue. */
  noteQueueFull(events: KernelEvent[], lost: number): void {
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

function parseJson(s: string | undefined): unknown {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Same event from a ring and from the database (the database normalises `detail`, so it is not part of this). */
const identity = (e: KernelEvent): string =>
  `${e.node ?? ''}\u0000${e.ts}\u0000${e.type}\u0000${e.pid}\u0000${e.durationMs ?? ''}\u0000${e.traceId ?? ''}`;

export class KernelEvidenceService {
  readonly keeper: KernelEvidenceKeeper;
  readonly lease: LeaseKeeper;
  /** Events offered to the keeper so far (a position is saved once everything offered before it is written). */
  offered = 0;
  readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 4 });
  private readers = new Map<string, StreamReader>();
  private positions?: Map<string, streams.StreamPosition>;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private lastGapPrune = 0;

  constructor(readonly o: KernelEvidenceOptions) {
    this.keeper = new KernelEvidenceKeeper({ db: o.db, log: o.log, retentionMs: o.retentionMs, ...o.keeper });
    this.lease = new LeaseKeeper({ db: o.db, name: KEEPER_LEASE, holder: o.holder, ttlMs: o.leaseTtlMs, log: o.log });
  }

  get log(): pino.Logger {
    return this.o.log;
  }
  get token(): string | undefined {
    return this.o.token;
  }

  start(): void {
    this.keeper.start();
    void this.keeper.prune().catch(() => {}); // records the retention cut at once
    this.lease.start();
    this.timer = setInterval(() => {
      void this.tick();
    }, this.o.checkpointMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    await Promise.all(Array.from(this.readers.values(), (r) => r.stop()));
    await this.keeper.stop();
    await this.checkpointAll(true);
    this.readers.clear();
    await this.lease.stop();
    await this.agent.close();
  }

  /** Hands a batch to the keeper; false: stop reading until it drains. */
  offer(reader: StreamReader, events: KernelEvent[]): boolean {
    if (!events.length) return true;
    const before = this.keeper.stats().dropped;
    const ok = this.keeper.offer(events);
    this.offered += events.length;
    const lost = this.keeper.stats().dropped - before;
    if (lost > 0) reader.noteQueueFull(events, lost);
    return ok;
  }

  /** One round: follow the exporter list (only while holding the lease), save positions, prune old gap records. */
  tick(): Promise<void> {
    this.ticking ??= this.round()
      .catch((err: unknown) => {
        this.o.log.warn({ err: (err as Error).message }, 'kernel evidence: round failed; next round retries');
      })
      .finally(() => {
        this.ticking = undefined;
      });
    return this.ticking;
  }

  private async round(): Promise<void> {
    const held = this.lease.held();
    if (held) {
      this.positions ??= await streams.streamPositions(this.o.db);
      const want = new Set(this.o.exporters.map((e) => e.baseUrl));
      for (const url of want) {
        if (this.readers.has(url)) continue;
        const r = new StreamReader(url, this, this.positions.get(url));
        this.readers.set(url, r);
        r.start();
        this.o.log.info(
          { exporter: url, resumeAfter: r.lastSeq },
          "kernel evidence: reading the exporter's notable stream"
        );
      }
      for (const [url, r] of this.readers)
        if (!want.has(url)) {
          await r.stop();
          this.readers.delete(url);
        }
    } else if (this.readers.size) {
      // Lost the lease: another proxy keeps the evidence now (from the positions saved here).
      await Promise.all(Array.from(this.readers.values(), (r) => r.stop()));
      await this.keeper.flush();
      await this.checkpointAll(true);
      this.readers.clear();
      this.positions = undefined;
    }
    await this.checkpointAll(false);
    const now = Date.now();
    if (now - this.lastGapPrune > 60_000) {
      this.lastGapPrune = now;
      await streams.pruneGaps(this.o.db, now - this.o.retentionMs);
    }
  }

  private async checkpointAll(final: boolean): Promise<void> {
    const settled = this.offered - this.keeper.stats().queued;
    for (const r of this.readers.values()) await r.checkpoint(this.o.db, settled, final);
  }

  /** The oldest event an exporter's ring holds now (any type); undefined when unknown or empty. */
  private async ringStart(e: ExporterSource): Promise<number | undefined> {
    try {
      const r = await callJson<{ events?: Array<{ ts?: unknown }> }>(`${e.baseUrl}/events?after=0&limit=1`, {
        source: e.name,
        timeoutMs: this.o.timeoutMs,
        retries: 0,
        ...(this.o.token ? { headers: { authorization: `Bearer ${this.o.token}` } } : {}),
      });
      const ts = r.status === 200 ? r.body?.events?.[0]?.ts : undefined;
      return typeof ts === 'number' ? ts : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * A window's kernel events: the exporters' rings when every one answers and still reaches back to `from`; else the
   * rings merged with the notable events kept in the database, saying so, and what is missing (retention, gaps).
   */
  async forWindow(q: { from: number; to: number; limit: number }): Promise<KernelWindow> {
    const exporters = this.o.exporters;
    const ring = exporters.length
      ? await eventsFromAll(exporters, { from: q.from, to: q.to, limit: q.limit })
      : undefined;
    // Asked after the events: a ring that still starts before the window now held all of it when it answered.
    const starts = await Promise.all(exporters.map((e) => this.ringStart(e)));
    const sources = ring ? ring.sources : [];
    let ringsFromMs: number | undefined;
    for (const s of starts) if (s !== undefined && (ringsFromMs === undefined || s > ringsFromMs)) ringsFromMs = s;
    const answered = sources.filter((s) => s.ok).length;
    const covered =
      exporters.length > 0 && answered === exporters.length && starts.every((s) => s !== undefined && s <= q.from);
    const base = {
      events: ring?.events ?? [],
      sources,
      dropped: ring?.dropped ?? 0,
      suppressed: ring?.suppressed ?? 0,
      invalid: ring?.invalid ?? 0,
      truncated: ring?.truncated ?? false,
    };
    if (covered)
      return { ...base, used: { source: 'rings', ...(ringsFromMs !== undefined ? { ringsFromMs } : {}) }, notes: [] };
    const notes: string[] = [];
    const t0 = performance.now();
    try {
      const db = this.o.db;
      const [kept, gaps, keptSince] = await Promise.all([
        queryKernelEvidence(db, { from: q.from, to: q.to, limit: KEPT_PAGE }),
        streams.gapsOverlapping(db, q.from, q.to, 50),
        streams.keptSinceMs(db),
      ]);
      sources.push({
        source: 'database (kept kernel evidence)',
        ok: true,
        latencyMs: Math.round(performance.now() - t0),
      });
      const seen = new Set(base.events.map(identity));
      const events = base.events.slice();
      let added = 0;
      for (const e of kept.events)
        if (!seen.has(identity(e))) {
          events.push(e);
          added++;
        }
      events.sort((a, b) => a.ts - b.ts);
      const source = answered ? 'rings+kept' : 'kept';
      const reach =
        ringsFromMs !== undefined
          ? `the oldest event they still hold is from ${iso(ringsFromMs)}`
          : 'they hold nothing older';
      const why = !exporters.length
        ? 'no bpf-exporter is configured'
        : answered < exporters.length
          ? `${exporters.length - answered} of ${exporters.length} exporter(s) did not answer`
          : `the exporters' rings no longer reach back to ${iso(q.from)} (${reach})`;
      notes.push(
        `kernel events: ${why}; ${added} notable event(s) kept in the database were used for this window (failed or slow connects and TLS handshakes, retransmits, GPU allocation failures; routine events are not kept)`
      );
      if (kept.retainedFromMs !== null && q.from < kept.retainedFromMs) {
        notes.push(
          `kernel evidence before ${iso(kept.retainedFromMs)} is past the retention of ${formatDuration(this.o.retentionMs)} (HOPSCOPE_KERNEL_EVIDENCE_RETENTION)`
        );
      } else if (keptSince === null) {
        notes.push('kernel evidence: none has been kept in the database yet (no exporter stream read so far)');
      } else if (q.from < keptSince) {
        notes.push(
          `kernel evidence is kept only since ${iso(keptSince)} (when this proxy first read the exporters' streams)`
        );
      }
      for (const g of gaps.slice(0, 5)) {
        notes.push(
          `kernel evidence of ${g.node ?? g.exporter} is missing from ${iso(g.fromMs)} to ${iso(g.toMs)}: ${GAP_WHY[g.reason] ?? g.reason}${g.missed !== null ? ` (${g.missed} event(s))` : ''}`
        );
      }
      if (gaps.length > 5) notes.push(`kernel evidence: ${gaps.length - 5} more gap(s) in this window`);
      if (kept.truncated)
        notes.push(
          `kernel events: more notable events are kept for this window than one answer reads (${KEPT_PAGE}); the earliest were used`
        );
      const used: KernelEvidenceUsed = {
        source,
        ...(ringsFromMs !== undefined ? { ringsFromMs } : {}),
        ...(kept.retainedFromMs !== null ? { retainedFromMs: kept.retainedFromMs } : {}),
        ...(keptSince !== null ? { keptSinceMs: keptSince } : {}),
        ...(gaps.length
          ? {
              gaps: gaps.map((g) => ({
                node: g.node ?? g.exporter,
                fromMs: g.fromMs,
                toMs: g.toMs,
                reason: g.reason,
                missed: g.missed,
              })),
            }
          : {}),
      };
      return { ...base, events, used, notes };
    } catch (err) {
      const msg = (err as Error).message;
      sources.push({
        source: 'database (kept kernel evidence)',
        ok: false,
        latencyMs: Math.round(performance.now() - t0),
        error: msg,
      });
      notes.push(
        `kernel events: the exporters' rings do not cover this window and the evidence kept in the database could not be read (${msg})`
      );
      return {
        ...base,
        used: { source: answered ? 'rings' : 'none', ...(ringsFromMs !== undefined ? { ringsFromMs } : {}) },
        notes,
      };
    }
  }

  /** The keeper lease, queue and each stream, for /api/health. */
  async health(): Promise<KernelEvidenceHealth> {
    const base = {
      lease: KEEPER_LEASE,
      self: this.lease.held(),
      retention: formatDuration(this.o.retentionMs),
      keeper: this.keeper.stats(),
      exporters: Array.from(this.readers.values(), (r) => r.state()),
    };
    try {
      const l = await currentLease(this.o.db, KEEPER_LEASE);
      return { ...base, holder: l?.holder ?? null };
    } catch (err) {
      return { ...base, holder: null, error: (err as Error).message };
    }
  }
}
