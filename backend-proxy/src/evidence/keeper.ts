/**
 * Feeds notable kernel events from the exporters' streams into the database, with back-pressure, and applies the
 * retention. `offer()` queues the notable events and answers false once the queue is over its high-water mark: the
 * stream reader then stops reading (`await keeper.drained()`), so a slow or down database slows the reader instead
 * of growing memory. What does not fit a full queue is dropped and counted (the exporter's ring still has it for a
 * while). Writes go in batches; a failed batch stays queued and is retried with backoff.
 */
import type pino from 'pino';
import type { KernelEvent } from '../../../contract';
import type { Database } from '../db/types';
import { KERNEL_EVIDENCE_LIMITS, insertKernelEvents, pruneKernelEvidence } from '../db/kernel-evidence-repo';
import { DEFAULT_NOTABLE, isNotableKernelEvent, type NotableThresholds } from './notable';

export interface KernelEvidenceKeeperOptions {
  db: Database;
  log: pino.Logger;
  /** Events older than this are deleted (HOPSCOPE_KERNEL_EVIDENCE_RETENTION). */
  retentionMs: number;
  /** Queue bound: offer() says "stop" above it, and drops what exceeds twice it. */
  highWater?: number;
  batch?: number;
  flushMs?: number;
  pruneEveryMs?: number;
  notable?: NotableThresholds;
  now?: () => number;
}

export interface KernelEvidenceStats {
  queued: number;
  written: number;
  duplicates: number;
  rejected: number;
  dropped: number;
  notOffered: number;
  pruned: number;
  failedWrites: number;
  lastError: string | null;
}

export class KernelEvidenceKeeper {
  private queue: KernelEvent[] = [];
  private readonly highWater: number;
  private readonly batch: number;
  private readonly now: () => number;
  private readonly s: KernelEvidenceStats = {
    queued: 0,
    written: 0,
    duplicates: 0,
    rejected: 0,
    dropped: 0,
    notOffered: 0,
    pruned: 0,
    failedWrites: 0,
    lastError: null,
  };
  private writing?: Promise<void>;
  private flushTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private retryAt = 0;
  private backoffMs = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly o: KernelEvidenceKeeperOptions) {
    this.highWater = o.highWater ?? 10_000;
    this.batch = Math.min(o.batch ?? 500, KERNEL_EVIDENCE_LIMITS.batch);
    this.now = o.now ?? Date.now;
  }

  /** Queues the notable events of `events`. False: over the high-water mark, stop reading until drained(). */
  offer(events: KernelEvent[]): boolean {
    const t = this.o.notable ?? DEFAULT_NOTABLE;
    for (const e of events) {
      if (!isNotableKernelEvent(e, t)) {
        this.s.notOffered++;
        continue;
      }
      if (this.queue.length >= 2 * this.highWater) {
        this.s.dropped++;
        continue;
      }
      this.queue.push(e);
    }
    if (this.queue.length >= this.batch) void this.flush();
    return this.queue.length < this.highWater;
  }

  /** Resolves once the queue is below the high-water mark. */
  drained(): Promise<void> {
    if (this.queue.length < this.highWater) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stats(): KernelEvidenceStats {
    return { ...this.s, queued: this.queue.length };
  }

  /** Writes what is queued (one batch after another); concurrent callers share the write. */
  flush(): Promise<void> {
    this.writing ??= this.writeAll().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  start(flushMs = this.o.flushMs ?? 250, pruneEveryMs = this.o.pruneEveryMs ?? 60_000): void {
    if (this.flushTimer) return;
    this.flushTimer = setInterval(() => {
      if (this.queue.length) void this.flush();
    }, flushMs);
    this.flushTimer.unref();
    this.pruneTimer = setInterval(() => {
      void this.prune().catch(() => {});
    }, pruneEveryMs);
    this.pruneTimer.unref();
  }

  /** Stops the timers and writes what is left (one attempt). */
  async stop(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.pruneTimer);
    this.flushTimer = undefined;
    this.retryAt = 0;
    await this.flush();
  }

  /** Retention: deletes what is older than now − retention, in bounded batches. */
  async prune(): Promise<number> {
    const cut = this.now() - this.o.retentionMs;
    let total = 0;
    try {
      for (;;) {
        const r = await pruneKernelEvidence(this.o.db, cut);
        total += r.deleted;
        if (!r.more) break;
      }
    } catch (err) {
      this.s.lastError = (err as Error).message;
      this.o.log.warn({ err: (err as Error).message }, 'kernel evidence: retention failed; next round retries');
      throw err;
    }
    this.s.pruned += total;
    return total;
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length && this.now() >= this.retryAt) {
      const chunk = this.queue.slice(0, this.batch);
      try {
        const r = await insertKernelEvents(this.o.db, chunk, this.now());
        this.queue.splice(0, chunk.length);
        this.s.written += r.inserted;
        this.s.duplicates += r.duplicates;
        this.s.rejected += r.rejected;
        if (r.firstRejection) this.o.log.debug({ reason: r.firstRejection }, 'kernel evidence: events rejected');
        this.backoffMs = 0;
        this.retryAt = 0;
      } catch (err) {
        this.s.failedWrites++;
        this.s.lastError = (err as Error).message;
        this.backoffMs = Math.min(30_000, this.backoffMs ? this.backoffMs * 2 : 500);
        this.retryAt = this.now() + this.backoffMs;
        this.o.log.warn(
          { err: (err as Error).message, queued: this.queue.length, retryInMs: this.backoffMs },
          'kernel evidence: write failed; kept queued'
        );
        break;
      }
      if (this.queue.length < this.highWater) this.wake();
    }
    if (this.queue.length < this.highWater) this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
