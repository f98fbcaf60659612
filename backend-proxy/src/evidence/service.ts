/**
 * Kernel evidence kept past the exporters' rings. The proxy holding the `kernel-evidence-keeper` lease subscribes to
 * every exporter's notable stream (`GET /events/stream?class=notable`, the fixed and the DNS-discovered ones, with
 * HOPSCOPE_EXPORTER_TOKEN: one StreamReader each, ./stream-reader.ts) and hands the events to the
 * KernelEvidenceKeeper (./keeper.ts), which writes them in batches:
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
 * The reading side (`forWindow`, used by root cause; ./window.ts): the exporters' rings when every one of them still reaches back
 * to the window, else the rings merged with the kept events, with what is missing said (retention, gaps, since when
 * evidence is kept) and which source was used.
 */
import { Agent } from 'undici';
import type pino from 'pino';
import type { KernelEvent } from '../../../contract';
import type { Database } from '../db/database';
import * as streams from '../db/kernel-stream-repo';
import { currentLease, LeaseKeeper } from '../db/lease';
import type { ExporterSource } from '../sources/exporters';
import { formatDuration } from './format-duration';
import { KernelEvidenceKeeper, type KernelEvidenceKeeperOptions, type KernelEvidenceStats } from './keeper';
import { StreamReader, type EvidenceSink, type ExporterStreamState } from './stream-reader';
import { kernelWindow, type KernelWindow } from './window';

export const KEEPER_LEASE = 'kernel-evidence-keeper';

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

/** The readers' sink: the keeper's queue, counting what was offered and what it could not queue (for the gap). */
class KeeperSink implements EvidenceSink {
  offered = 0;

  constructor(private keeper: KernelEvidenceKeeper) {}

  offer(events: KernelEvent[]): { ok: boolean; lost: number } {
    const before = this.keeper.stats().dropped;
    const ok = this.keeper.offer(events);
    this.offered += events.length;
    return { ok, lost: this.keeper.stats().dropped - before };
  }

  drained(): Promise<void> {
    return this.keeper.drained();
  }
}

export class KernelEvidenceService {
  readonly keeper: KernelEvidenceKeeper;
  readonly lease: LeaseKeeper;
  /** The readers' sink: the keeper's queue. */
  private readonly sink: KeeperSink;
  readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 4 });
  private readers = new Map<string, StreamReader>();
  private positions?: Map<string, streams.StreamPosition>;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private lastGapPrune = 0;

  constructor(readonly o: KernelEvidenceOptions) {
    this.keeper = new KernelEvidenceKeeper({ db: o.db, log: o.log, retentionMs: o.retentionMs, ...o.keeper });
    this.sink = new KeeperSink(this.keeper);
    this.lease = new LeaseKeeper({ db: o.db, name: KEEPER_LEASE, holder: o.holder, ttlMs: o.leaseTtlMs, log: o.log });
  }

  /** Events offered to the keeper so far (a position is saved once everything offered before it is written). */
  get offered(): number {
    return this.sink.offered;
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
        const r = new StreamReader(
          url,
          {
            sink: this.sink,
            request: (o) => this.agent.request(o),
            token: this.o.token,
            timeoutMs: this.o.timeoutMs,
            idleMs: this.o.idleMs,
            log: this.o.log,
          },
          this.positions.get(url)
        );
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

  /**
   * A window's kernel events: the exporters' rings when every one answers and still reaches back to `from`; else the
   * rings merged with the notable events kept in the database, saying so, and what is missing (retention, gaps).
   */
  forWindow(q: { from: number; to: number; limit: number }): Promise<KernelWindow> {
    return kernelWindow(this.o, q);
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
