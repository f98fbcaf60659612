/**
 * Retention of the proxy's state: runs (with their workers' reports) and saved root-cause answers older than
 * HOPSCOPE_RETENTION_DAYS (default 90) are deleted at start and every hour, in batches so one long delete never
 * holds the tables. Several proxies on one database may prune at once: deletes are idempotent. A running run is kept
 * whatever its age. The database down: logged, the next round retries.
 */
import type pino from 'pino';
import type { Database } from '../db/database';
import { pruneRcaAnswers } from '../db/rca-answers-repo';
import { pruneRuns } from '../db/runs-repo';

export const DEFAULT_RETENTION_DAYS = 90;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Runs per delete (a run's workers' reports may be 256 × 2 MiB) and answers per delete. */
const RUN_BATCH = 20;
const ANSWER_BATCH = 500;

export interface RetentionOptions {
  db: Database;
  log: pino.Logger;
  days?: number;
  /** The clock (tests). */
  now?: () => number;
  /** How often a round runs (default hourly). */
  intervalMs?: number;
}

export class RetentionService {
  readonly days: number;
  private timer?: NodeJS.Timeout;
  private round?: Promise<unknown>;

  constructor(private o: RetentionOptions) {
    this.days = o.days ?? DEFAULT_RETENTION_DAYS;
  }

  /** One round: everything older than the retention deleted; what was deleted, counted. */
  async prune(): Promise<{ runs: number; answers: number; beforeMs: number }> {
    const beforeMs = (this.o.now ?? Date.now)() - this.days * DAY_MS;
    const out = { runs: 0, answers: 0, beforeMs };
    for (let more = true; more;) {
      const r = await pruneRuns(this.o.db, beforeMs, RUN_BATCH);
      out.runs += r.deleted;
      more = r.more;
    }
    for (let more = true; more;) {
      const r = await pruneRcaAnswers(this.o.db, beforeMs, ANSWER_BATCH);
      out.answers += r.deleted;
      more = r.more;
    }
    if (out.runs || out.answers)
      this.o.log.info({ ...out, days: this.days }, 'retention: deleted runs and saved answers past their retention');
    return out;
  }

  private tick(): void {
    if (this.round) return;
    this.round = this.prune()
      .catch((err: unknown) =>
        this.o.log.warn({ err: (err as Error).message }, 'retention round failed; the next round retries')
      )
      .finally(() => {
        this.round = undefined;
      });
  }

  /** A round now (at start), then every hour until stop(). */
  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.o.intervalMs ?? HOUR_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
  }
}
