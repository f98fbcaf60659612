/**
 * The runs service: what the load generator's workers report (register, heartbeat, finish) and what the Runs page
 * reads (list, record), on the database, without HTTP. Each call is one transaction on the run's row (locked), so
 * workers of one run, and several proxies on one PostgreSQL, change it one at a time.
 *
 * Every call is idempotent for its client's retries: the same registration or finish sent again (the answer was lost)
 * is acknowledged again, not refused as a reuse, and a heartbeat never moves totals back. When the database is down
 * the call fails with RunsError('unavailable') and nothing half-done stays: the client retries.
 */
import { createHash } from 'node:crypto';
import type pino from 'pino';
import type { z } from 'zod';
import {
  RunFinish,
  RunHeartbeat,
  RunId,
  RunRegistration,
  RunStatus,
  type RunList,
  type RunRecord,
} from '../../../contract';
import type { Database, Queryable } from '../db/database';
import { DatabaseUnavailableError } from '../db/errors';
import * as repo from '../db/runs-repo';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from '../domain/runs';
import { RunsError } from './errors';
import { listFigures, mergeRun, runStatus, type WorkerResult } from './merge';
import { checkMetricsUrl } from './metrics-url';

export { DEFAULT_HEARTBEAT_TIMEOUT_MS };
/** Bounds on what one call may store. */
export const LIMITS = {
  registrationBytes: 128 * 1024,
  finishBytes: 2 * 1024 * 1024,
  workersPerRun: 256,
  listPage: 1000,
  listOffset: 1_000_000,
  scrapeTargets: 5000,
} as const;

export interface RunsServiceOptions {
  db: Database;
  log: pino.Logger;
  /** A worker without a heartbeat for this long is aborted (and its run ends when no other worker runs). */
  heartbeatTimeoutMs?: number;
  /** The clock (tests). */
  now?: () => number;
  /** Hosts a run's metricsUrl may name besides the registering worker's own address (HOPSCOPE_RUN_METRICS_HOSTS). */
  metricsHosts?: readonly string[];
}

export interface RunListQuery {
  from?: number;
  to?: number;
  limit?: number;
  offset?: number;
  scenario?: string;
  status?: RunStatus;
}

export interface HeartbeatAck {
  runId: string;
  workerId: string;
  status: 'running';
  lastHeartbeatMs: number;
}

/** One Prometheus HTTP service discovery group (https://prometheus.io/docs/prometheus/latest/http_sd/). */
export interface ScrapeTargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

const hash = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');
const iso = (ms: number): string => new Date(ms).toISOString();

function parse<S extends z.ZodType>(schema: S, input: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');
  throw new RunsError('invalid', `${what}: ${issues}`);
}

function checkSize(v: unknown, max: number, what: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(v));
  if (bytes > max) throw new RunsError('too_large', `${what} is ${bytes} bytes, over the ${max}-byte limit`);
}

function workerResult(w: repo.WorkerRow): WorkerResult {
  return {
    workerId: w.worker_id,
    status: w.status,
    startMs: w.start_ms,
    lastHeartbeatMs: w.last_heartbeat_ms,
    finish: w.finish,
    abortReason: w.abort_reason,
    plannedFaults: w.registration.faults ?? [],
  };
}

export class RunsService {
  readonly heartbeatTimeoutMs: number;
  private readonly metricsHosts: readonly string[];
  private readonly db: Database;
  private readonly log: pino.Logger;
  private readonly now: () => number;
  /** Since when the database has answered without interruption (null: it just failed). */
  private healthySince: number | null = null;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(o: RunsServiceOptions) {
    this.db = o.db;
    this.log = o.log;
    this.now = o.now ?? Date.now;
    this.heartbeatTimeoutMs = o.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
    this.metricsHosts = o.metricsHosts ?? [];
  }

  /** A registration's metricsUrl may become a scrape target (./metrics-url.ts); `remote`: the worker's address. */
  checkMetricsUrl(metricsUrl: unknown, remote: string | undefined): void {
    checkMetricsUrl(typeof metricsUrl === 'string' ? metricsUrl : undefined, remote, this.metricsHosts);
  }

  /** A worker registers a run, or joins a running one (`join: true`, same scenario). Answers the run's record. */
  async register(input: z.input<typeof RunRegistration>): Promise<RunRecord> {
    const parsed = parse(RunRegistration, input, 'run registration');
    // user:password@ in the target is never kept (every Viewer reads the run).
    const reg = { ...parsed, target: repo.withoutCredentials(parsed.target) };
    checkSize(reg, LIMITS.registrationBytes, 'the registration');
    const regHash = hash(reg);
    return this.guard(`register run ${reg.runId}`, () =>
      this.db.tx(async (q) => {
        const now = this.now();
        const created = await repo.insertRun(q, reg, now);
        const run = (await repo.lockRun(q, reg.runId))!;
        const existing = created ? null : await repo.getWorker(q, reg.runId, reg.workerId);
        if (existing) {
          if (existing.registration_hash === regHash) return this.record(q, reg.runId); // a retry: already done
          throw new RunsError(
            'conflict',
            `run id "${reg.runId}" is already used, and worker "${reg.workerId}" registered it with other settings (scenario "${run.scenario}", started ${iso(run.start_ms)}, ${run.status}): choose a new run id`
          );
        }
        if (!created) {
          if (!reg.join) {
            throw new RunsError(
              'conflict',
              `run id "${reg.runId}" is already used (scenario "${run.scenario}", started ${iso(run.start_ms)}, ${run.status}): choose a new run id, or register with join: true to add a worker to a running run`
            );
          }
          if (run.status !== 'running')
            throw new RunsError(
              'conflict',
              `run "${reg.runId}" has ended (${run.status}): a worker cannot join it; start a new run id`
            );
          if (run.scenario !== reg.scenario)
            throw new RunsError(
              'conflict',
              `run "${reg.runId}" runs scenario "${run.scenario}", not "${reg.scenario}": workers of one run share its scenario`
            );
          if (run.workers >= LIMITS.workersPerRun)
            throw new RunsError('conflict', `run "${reg.runId}" has ${run.workers} workers, the most one run may have`);
        }
        await repo.addWorker(q, reg, regHash, now);
        this.log.info(
          { runId: reg.runId, workerId: reg.workerId, scenario: reg.scenario, joined: !created },
          created ? 'run registered' : 'worker joined run'
        );
        return this.record(q, reg.runId);
      })
    );
  }

  async heartbeat(runId: string, input: z.input<typeof RunHeartbeat>): Promise<HeartbeatAck> {
    const id = parse(RunId, runId, 'run id');
    const hb = parse(RunHeartbeat, input, 'heartbeat');
    return this.guard(`heartbeat of run ${id}`, () =>
      this.db.tx(async (q) => {
        const w = await this.lockWorker(q, id, hb.workerId);
        if (w.status !== 'running') {
          const why = w.abort_reason ? `: ${w.abort_reason}` : '';
          throw new RunsError(
            'conflict',
            `worker "${hb.workerId}" of run "${id}" has ended (${w.status}${why}); it no longer takes heartbeats`
          );
        }
        const now = this.now();
        await repo.recordHeartbeat(q, id, hb, now);
        return {
          runId: id,
          workerId: hb.workerId,
          status: 'running' as const,
          lastHeartbeatMs: Math.max(now, w.last_heartbeat_ms),
        };
      })
    );
  }

  /**
   * A worker's end of run. The run ends when no worker runs any more; a worker that was aborted for missing
   * heartbeats may still finish (its report is kept and the run's outcome recomputed: nothing it measured is lost).
   */
  async finish(runId: string, input: z.input<typeof RunFinish>): Promise<RunRecord> {
    const id = parse(RunId, runId, 'run id');
    const fin = parse(RunFinish, input, 'run finish');
    checkSize(fin, LIMITS.finishBytes, 'the finish report');
    const finHash = hash(fin);
    return this.guard(`finish of run ${id}`, () =>
      this.db.tx(async (q) => {
        const w = await this.lockWorker(q, id, fin.workerId);
        if (w.finish_hash !== null) {
          if (w.finish_hash === finHash) return this.record(q, id); // a retry: already done
          throw new RunsError(
            'conflict',
            `worker "${fin.workerId}" already finished run "${id}" (${w.status}) with a different report`
          );
        }
        if (w.status === 'aborted')
          this.log.info(
            { runId: id, workerId: fin.workerId, reason: w.abort_reason },
            'late finish from an aborted worker: kept'
          );
        await repo.recordFinish(q, id, fin, finHash);
        await this.settle(q, id);
        return this.record(q, id);
      })
    );
  }

  async get(runId: string): Promise<RunRecord> {
    const id = parse(RunId, runId, 'run id');
    return this.guard(`run ${id}`, () => this.record(this.db, id));
  }

  async list(query: RunListQuery = {}): Promise<RunList> {
    const limit = query.limit ?? 100;
    const offset = query.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.listPage)
      throw new RunsError('invalid', `limit must be a whole number 1..${LIMITS.listPage}, not ${limit}`);
    if (!Number.isInteger(offset) || offset < 0 || offset > LIMITS.listOffset)
      throw new RunsError('invalid', `offset must be a whole number 0..${LIMITS.listOffset}, not ${offset}`);
    const from = query.from ?? 0;
    const to = query.to ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isFinite(from) || !Number.isFinite(to) || from > to)
      throw new RunsError('invalid', `from (${from}) and to (${to}) must be epoch ms with from ≤ to`);
    const status = query.status === undefined ? undefined : parse(RunStatus, query.status, 'status');
    return this.guard('the runs list', () =>
      repo.listRuns(this.db, { from, to, limit, offset, scenario: query.scenario, status })
    );
  }

  /** Where Prometheus scrapes running workers' client metrics: the body of an HTTP SD endpoint. */
  async scrapeTargets(): Promise<ScrapeTargetGroup[]> {
    const rows = await this.guard('scrape targets', () => repo.runningTargets(this.db, LIMITS.scrapeTargets));
    const groups: ScrapeTargetGroup[] = [];
    for (const r of rows) {
      let u: URL;
      try {
        u = new URL(r.metricsUrl);
      } catch {
        continue;
      } // validated at registration; skip rather than fail the endpoint
      // Registered before the check existed: a query would steer Prometheus (__param_*), so it is not a target.
      if (u.search || u.username || u.password || (u.protocol !== 'http:' && u.protocol !== 'https:')) continue;
      const labels: Record<string, string> = {
        __scheme__: u.protocol.replace(':', ''),
        __metrics_path__: u.pathname || '/metrics',
        run_id: r.runId,
        scenario: r.scenario,
        worker_id: r.workerId,
      };
      groups.push({ targets: [u.host], labels });
    }
    return groups;
  }

  /**
   * Aborts workers whose last heartbeat is older than the timeout, and ends their runs when no worker is left. Only
   * once the database has answered for a whole timeout: after an outage (or at start) every heartbeat is old, and
   * workers get that long to be heard again. Several proxies may sweep at once: each abort re-checks under the lock.
   */
  async sweep(): Promise<{ abortedWorkers: number; endedRuns: number }> {
    const cutoff = this.now() - this.heartbeatTimeoutMs;
    const stale = await this.guard('heartbeat sweep', () => repo.staleWorkers(this.db, cutoff, 500));
    const out = { abortedWorkers: 0, endedRuns: 0 };
    if (!stale.length || this.healthySince === null || this.now() - this.healthySince < this.heartbeatTimeoutMs)
      return out;
    const byRun = new Map<string, repo.StaleWorker[]>();
    for (const s of stale) byRun.set(s.runId, [...(byRun.get(s.runId) ?? []), s]);
    for (const [runId, workers] of byRun) {
      await this.guard(`heartbeat sweep of run ${runId}`, () =>
        this.db.tx(async (q) => {
          if (!(await repo.lockRun(q, runId))) return;
          let n = 0;
          for (const w of workers) {
            const reason = `no heartbeat from worker ${w.workerId} since ${iso(w.lastHeartbeatMs)} (timeout ${this.heartbeatTimeoutMs / 1000} s)`;
            if (await repo.abortWorker(q, runId, w.workerId, reason, cutoff)) n++;
          }
          if (!n) return;
          out.abortedWorkers += n;
          const status = await this.settle(q, runId);
          if (status !== 'running') {
            out.endedRuns++;
            this.log.warn({ runId, status }, 'run ended by the heartbeat sweep');
          }
        })
      );
    }
    return out;
  }

  /** Sweeps every few seconds until stop(); errors are logged, never thrown. */
  start(intervalMs = Math.max(250, Math.min(5000, this.heartbeatTimeoutMs / 3))): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((err: unknown) =>
          this.log.warn({ err: (err as Error).message }, 'heartbeat sweep failed; next round retries')
        )
        .finally(() => {
          this.sweeping = undefined;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /**
   * Deletes a run and its workers' reports (Editors: DELETE /api/runs/:runId). A running run is refused (409): it ends
   * by its finish or the heartbeat sweep first.
   */
  async remove(runId: string): Promise<{ runId: string; deleted: true }> {
    const id = parse(RunId, runId, 'runId');
    return this.guard(`delete of run ${id}`, () =>
      this.db.tx(async (q) => {
        const row = await repo.lockRun(q, id);
        if (!row) throw new RunsError('not_found', `no run "${id}" (GET /api/runs lists them)`);
        if (row.status === 'running')
          throw new RunsError(
            'conflict',
            `run "${id}" is still running: delete it once it ends (its finish, or the heartbeat sweep)`
          );
        await repo.deleteRun(q, id);
        return { runId: id, deleted: true as const };
      })
    );
  }

  /** The worker's row under its run's lock, or not_found with what to do. */
  private async lockWorker(q: Queryable, runId: string, workerId: string): Promise<repo.WorkerRow> {
    if (!(await repo.lockRun(q, runId)))
      throw new RunsError('not_found', `no run "${runId}": register it first (POST /api/runs)`);
    const w = await repo.getWorker(q, runId, workerId);
    if (!w)
      throw new RunsError(
        'not_found',
        `worker "${workerId}" is not part of run "${runId}": register it with join: true first`
      );
    return w;
  }

  /**
   * Recomputes the run's outcome from its workers (run row locked); returns its status. While any worker runs, only
   * their statuses are read; the reports (up to 2 MiB each) are read once, when the last worker is done.
   */
  private async settle(q: Queryable, runId: string): Promise<RunStatus> {
    const now = this.now();
    if (runStatus(await repo.workerStatuses(q, runId)) === 'running') {
      await repo.refreshLive(q, runId, now);
      return 'running';
    }
    const workers = (await repo.listWorkers(q, runId)).map(workerResult);
    const m = mergeRun(workers);
    await repo.saveOutcome(
      q,
      runId,
      {
        status: m.status,
        endMs: m.endMs,
        abortReason: m.abortReason,
        result: {
          summary: m.summary,
          merge: m.merge,
          thresholds: m.thresholds,
          regressions: m.regressions,
          faults: m.faults,
          slowest: m.slowest,
          failed: m.failed,
        },
        figures: listFigures(m.summary),
      },
      now
    );
    await repo.refreshLive(q, runId, now);
    this.log.info({ runId, status: m.status, workers: workers.length }, 'run ended');
    return m.status;
  }

  private async record(q: Queryable, runId: string): Promise<RunRecord> {
    const row = await repo.getRun(q, runId);
    if (!row) throw new RunsError('not_found', `no run "${runId}"`);
    return repo.recordOf(row);
  }

  /** Maps "database down" to RunsError('unavailable') and keeps track of how long the database has been healthy. */
  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      const out = await fn();
      this.healthySince ??= this.now();
      return out;
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) {
        this.healthySince = null;
        this.log.warn({ err: err.message }, `runs: ${what} failed: database unavailable`);
        throw new RunsError(
          'unavailable',
          `the runs database is unavailable (${what}): ${err.message}. Nothing half-done was kept; retry in ${err.retryAfterS} s`,
          err.retryAfterS
        );
      }
      this.healthySince ??= this.now(); // the database answered; the call itself was refused
      throw err;
    }
  }
}
