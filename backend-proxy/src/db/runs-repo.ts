/**
 * Load-test runs and their workers, as rows. No rules here (the runs service decides what may happen); every
 * function takes a Queryable so the service runs several in one transaction, and maps rows to the contract's types.
 * The list reads only the denormalised columns (never the result document), newest first.
 */
import type {
  AppliedFault,
  RunFinish,
  RunHeartbeat,
  RunList,
  RunListItem,
  RunRecord,
  RunRegistration,
  RunStatus,
} from '../../../contract';
import type { ListFigures } from '../domain/runs';
import type { Queryable } from './types';

/** A run's target without `user:password@` (it is shown to every Viewer): kept out of the database and the answers. */
export function withoutCredentials(target: string): string {
  return target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}

/** The merged outcome stored with a run once every worker is done. */
export interface RunResult {
  summary: RunRecord['summary'];
  merge: RunRecord['merge'];
  thresholds: RunRecord['thresholds'];
  regressions: RunRecord['regressions'];
  faults: RunRecord['faults'];
  slowest: RunRecord['slowest'];
  failed: RunRecord['failed'];
}

/** The runs list's denormalised columns, as the merge computes them from a run's summary. */
export type RunListFigures = ListFigures;

export interface RunRow {
  run_id: string;
  scenario: string;
  status: RunStatus;
  start_ms: number;
  end_ms: number | null;
  target: string;
  options: Record<string, unknown>;
  thresholds: string[];
  faults: AppliedFault[];
  baseline_run_id: string | null;
  workers: number;
  live_sent: number;
  live_completed: number;
  live_errors: number;
  live_in_flight: number;
  last_heartbeat_ms: number;
  result: RunResult | null;
  abort_reason: string | null;
  duration_s: number | null;
  target_rps: number | null;
  achieved_rps: number | null;
  ttft_p99_ms: number | null;
  e2e_p99_ms: number | null;
  goodput_ratio: number | null;
  errors: number | null;
  error_rate: number | null;
}

export interface WorkerRow {
  run_id: string;
  worker_id: string;
  registration: RunRegistration;
  registration_hash: string;
  metrics_url: string | null;
  status: RunStatus;
  start_ms: number;
  joined_ms: number;
  last_heartbeat_ms: number;
  sent: number;
  completed: number;
  errors: number;
  in_flight: number;
  finish: RunFinish | null;
  finish_hash: string | null;
  end_ms: number | null;
  abort_reason: string | null;
}

const LIST_COLUMNS = `run_id, scenario, status, start_ms, end_ms, workers, live_sent, live_completed, live_errors, live_in_flight,
  last_heartbeat_ms, duration_s, target_rps, achieved_rps, ttft_p99_ms, e2e_p99_ms, goodput_ratio, errors, error_rate`;

const json = (v: unknown): string => JSON.stringify(v);

/** Creates the run from its first registration; false when the run id exists already. */
export async function insertRun(q: Queryable, reg: RunRegistration, nowMs: number): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO runs (run_id, scenario, status, start_ms, target, options, thresholds, faults, baseline_run_id, workers, last_heartbeat_ms, created_ms, updated_ms)
     VALUES ($1, $2, 'running', $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8, 0, $9, $9, $9)
     ON CONFLICT (run_id) DO NOTHING RETURNING run_id`,
    [
      reg.runId,
      reg.scenario,
      reg.startMs,
      reg.target,
      json(reg.options),
      json(reg.thresholds),
      json(reg.faults),
      reg.baselineRunId ?? null,
      nowMs,
    ]
  );
  return r.rowCount > 0;
}

/** The run's row, locked until the transaction ends (every change to a run goes through this). */
export async function lockRun(q: Queryable, runId: string): Promise<RunRow | null> {
  return (await q.query<RunRow>('SELECT * FROM runs WHERE run_id = $1 FOR UPDATE', [runId])).rows[0] ?? null;
}

export async function getRun(q: Queryable, runId: string): Promise<RunRow | null> {
  return (await q.query<RunRow>('SELECT * FROM runs WHERE run_id = $1', [runId])).rows[0] ?? null;
}

export async function getWorker(q: Queryable, runId: string, workerId: string): Promise<WorkerRow | null> {
  return (
    (await q.query<WorkerRow>('SELECT * FROM run_workers WHERE run_id = $1 AND worker_id = $2', [runId, workerId]))
      .rows[0] ?? null
  );
}

export async function listWorkers(q: Queryable, runId: string): Promise<WorkerRow[]> {
  return (
    await q.query<WorkerRow>('SELECT * FROM run_workers WHERE run_id = $1 ORDER BY joined_ms, worker_id', [runId])
  ).rows;
}

/**
 * The workers' statuses only (what a run's outcome needs while any still runs): no reports, which may be 2 MiB each.
 */
export async function workerStatuses(q: Queryable, runId: string): Promise<Array<{ status: RunStatus }>> {
  return (await q.query<{ status: RunStatus }>('SELECT status FROM run_workers WHERE run_id = $1', [runId])).rows;
}

/** Deletes a run and its workers' reports (ON DELETE CASCADE); false when there was none. */
export async function deleteRun(q: Queryable, runId: string): Promise<boolean> {
  return (await q.query('DELETE FROM runs WHERE run_id = $1 RETURNING run_id', [runId])).rowCount > 0;
}

/**
 * Retention: deletes ended runs that started before `beforeMs`, with their workers' reports, at most `batch` runs
 * per call (call again while `more`: one long delete never holds the tables). A running run is kept.
 */
export async function pruneRuns(
  q: Queryable,
  beforeMs: number,
  batch: number
): Promise<{ deleted: number; more: boolean }> {
  const r = await q.query(
    `DELETE FROM runs WHERE run_id IN
       (SELECT run_id FROM runs WHERE status <> 'running' AND start_ms < $1 ORDER BY start_ms LIMIT $2)`,
    [beforeMs, batch]
  );
  return { deleted: r.rowCount, more: r.rowCount >= batch };
}

/** Adds a worker (the run row must be locked) and folds its start and planned faults into the run. */
export async function addWorker(
  q: Queryable,
  reg: RunRegistration,
  registrationHash: string,
  nowMs: number
): Promise<void> {
  await q.query(
    `INSERT INTO run_workers (run_id, worker_id, registration, registration_hash, metrics_url, status, start_ms, joined_ms, last_heartbeat_ms)
     VALUES ($1, $2, $3::jsonb, $4, $5, 'running', $6, $7, $7)`,
    [reg.runId, reg.workerId, json(reg), registrationHash, reg.metricsUrl ?? null, reg.startMs, nowMs]
  );
  await q.query(
    `UPDATE runs SET workers = workers + 1, start_ms = LEAST(start_ms, $2), last_heartbeat_ms = GREATEST(last_heartbeat_ms, $3), updated_ms = $3,
       faults = CASE WHEN workers = 0 THEN faults ELSE faults || $4::jsonb END
     WHERE run_id = $1`,
    [reg.runId, reg.startMs, nowMs, json(reg.faults)]
  );
}

/**
 * A worker's latest totals. They only grow, so a heartbeat that arrives late (a retry overtaken by the next one)
 * does not move them back; in-flight is whatever the latest says.
 */
export async function recordHeartbeat(q: Queryable, runId: string, hb: RunHeartbeat, nowMs: number): Promise<void> {
  await q.query(
    `UPDATE run_workers SET sent = GREATEST(sent, $3), completed = GREATEST(completed, $4), errors = GREATEST(errors, $5), in_flight = $6,
       last_heartbeat_ms = GREATEST(last_heartbeat_ms, $7)
     WHERE run_id = $1 AND worker_id = $2`,
    [runId, hb.workerId, hb.sent, hb.completed, hb.errors, hb.inFlight, nowMs]
  );
  await refreshLive(q, runId, nowMs);
}

/** The run's live totals: the sum over its workers. */
export async function refreshLive(q: Queryable, runId: string, nowMs: number): Promise<void> {
  await q.query(
    `UPDATE runs SET (live_sent, live_completed, live_errors, live_in_flight, last_heartbeat_ms) =
       (SELECT COALESCE(SUM(sent), 0), COALESCE(SUM(completed), 0), COALESCE(SUM(errors), 0), COALESCE(SUM(in_flight), 0), COALESCE(MAX(last_heartbeat_ms), runs.last_heartbeat_ms)
          FROM run_workers WHERE run_workers.run_id = runs.run_id),
       updated_ms = $2
     WHERE run_id = $1`,
    [runId, nowMs]
  );
}

export async function recordFinish(q: Queryable, runId: string, fin: RunFinish, finishHash: string): Promise<void> {
  await q.query(
    `UPDATE run_workers SET status = $3, finish = $4::jsonb, finish_hash = $5, end_ms = $6, abort_reason = NULL,
       sent = $7, completed = $8, errors = $9, in_flight = 0
     WHERE run_id = $1 AND worker_id = $2`,
    [
      runId,
      fin.workerId,
      fin.status,
      json(fin),
      finishHash,
      fin.endMs,
      fin.summary.sent,
      fin.summary.completed,
      fin.summary.errors.total,
    ]
  );
}

/** Marks a still-running worker aborted; false when it is no longer running (a heartbeat or finish won the race). */
export async function abortWorker(
  q: Queryable,
  runId: string,
  workerId: string,
  reason: string,
  staleBeforeMs: number
): Promise<boolean> {
  const r = await q.query(
    `UPDATE run_workers SET status = 'aborted', abort_reason = $3, in_flight = 0
     WHERE run_id = $1 AND worker_id = $2 AND status = 'running' AND last_heartbeat_ms < $4 RETURNING worker_id`,
    [runId, workerId, reason, staleBeforeMs]
  );
  return r.rowCount > 0;
}

export interface RunOutcome {
  status: RunStatus;
  endMs: number | null;
  abortReason: string | null;
  result: RunResult | null;
  figures: RunListFigures;
}

/** Stores the run's outcome (status running: the result is cleared, the run goes on). */
export async function saveOutcome(q: Queryable, runId: string, o: RunOutcome, nowMs: number): Promise<void> {
  const f = o.figures;
  await q.query(
    `UPDATE runs SET status = $2, end_ms = $3, abort_reason = $4, result = $5::jsonb,
       duration_s = $6, target_rps = $7, achieved_rps = $8, ttft_p99_ms = $9, e2e_p99_ms = $10, goodput_ratio = $11, errors = $12, error_rate = $13,
       updated_ms = $14
     WHERE run_id = $1`,
    [
      runId,
      o.status,
      o.endMs,
      o.abortReason,
      o.result ? json(o.result) : null,
      f.durationS,
      f.targetRps,
      f.achievedRps,
      f.ttftP99Ms,
      f.e2eP99Ms,
      f.goodputRatio,
      f.errors,
      f.errorRate,
      nowMs,
    ]
  );
}

type ListRow = Pick<
  RunRow,
  | 'run_id'
  | 'scenario'
  | 'status'
  | 'start_ms'
  | 'end_ms'
  | 'workers'
  | 'live_sent'
  | 'live_completed'
  | 'live_errors'
  | 'live_in_flight'
  | 'last_heartbeat_ms'
  | 'duration_s'
  | 'target_rps'
  | 'achieved_rps'
  | 'ttft_p99_ms'
  | 'e2e_p99_ms'
  | 'goodput_ratio'
  | 'errors'
  | 'error_rate'
>;

function listItem(r: ListRow): RunListItem {
  return {
    runId: r.run_id,
    scenario: r.scenario,
    status: r.status,
    startMs: r.start_ms,
    endMs: r.end_ms,
    durationS: r.duration_s ?? (r.end_ms !== null ? (r.end_ms - r.start_ms) / 1000 : null),
    targetRps: r.target_rps,
    achievedRps: r.achieved_rps,
    ttftP99Ms: r.ttft_p99_ms,
    e2eP99Ms: r.e2e_p99_ms,
    goodputRatio: r.goodput_ratio,
    errors: r.errors,
    errorRate: r.error_rate,
    workers: r.workers,
    live:
      r.status === 'running'
        ? {
            sent: r.live_sent,
            completed: r.live_completed,
            errors: r.live_errors,
            inFlight: r.live_in_flight,
            lastHeartbeatMs: r.last_heartbeat_ms,
          }
        : null,
  };
}

/** Planned faults of several workers' registrations, each once (the usual case: all workers plan the same). */
function uniqueByJson<T>(xs: T[]): T[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = JSON.stringify(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function recordOf(r: RunRow): RunRecord {
  const res = r.result;
  return {
    ...listItem(r),
    target: withoutCredentials(r.target),
    options: r.options,
    baselineRunId: r.baseline_run_id,
    thresholds: res?.thresholds ?? [],
    regressions: res?.regressions ?? [],
    summary: res?.summary ?? null,
    merge: res?.merge ?? null,
    faults: res?.faults ?? uniqueByJson(r.faults),
    slowest: res?.slowest ?? [],
    failed: res?.failed ?? [],
    abortReason: r.abort_reason,
  };
}

export interface RunListFilter {
  /** Runs overlapping [from, to] (a running run overlaps everything after its start). */
  from: number;
  to: number;
  limit: number;
  offset: number;
  scenario?: string;
  status?: RunStatus;
}

export async function listRuns(q: Queryable, f: RunListFilter): Promise<RunList> {
  const where = ['start_ms <= $1', '(end_ms IS NULL OR end_ms >= $2)'];
  const params: unknown[] = [Math.min(f.to, Number.MAX_SAFE_INTEGER), Math.max(f.from, -Number.MAX_SAFE_INTEGER)];
  if (f.scenario !== undefined) {
    params.push(f.scenario);
    where.push(`scenario = $${params.length}`);
  }
  if (f.status !== undefined) {
    params.push(f.status);
    where.push(`status = $${params.length}`);
  }
  const cond = where.join(' AND ');
  const n = params.length;
  const rows = await q.query<ListRow>(
    `SELECT ${LIST_COLUMNS} FROM runs WHERE ${cond} ORDER BY start_ms DESC, run_id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, f.limit, f.offset]
  );
  // The page is the whole answer when it is not full and starts at 0: no second query.
  const total =
    f.offset === 0 && rows.rows.length < f.limit
      ? rows.rows.length
      : (await q.query<{ n: number }>(`SELECT count(*) AS n FROM runs WHERE ${cond}`, params)).rows[0].n;
  return { runs: rows.rows.map(listItem), total };
}

export interface StaleWorker {
  runId: string;
  workerId: string;
  lastHeartbeatMs: number;
}

/** Running workers whose last heartbeat is older than `beforeMs`, oldest first. */
export async function staleWorkers(q: Queryable, beforeMs: number, limit: number): Promise<StaleWorker[]> {
  const r = await q.query<{ run_id: string; worker_id: string; last_heartbeat_ms: number }>(
    `SELECT run_id, worker_id, last_heartbeat_ms FROM run_workers WHERE status = 'running' AND last_heartbeat_ms < $1 ORDER BY last_heartbeat_ms LIMIT $2`,
    [beforeMs, limit]
  );
  return r.rows.map((x) => ({ runId: x.run_id, workerId: x.worker_id, lastHeartbeatMs: x.last_heartbeat_ms }));
}

export interface RunningTarget {
  runId: string;
  workerId: string;
  scenario: string;
  metricsUrl: string;
}

/** Running workers that said where their client metrics are. */
export async function runningTargets(q: Queryable, limit: number): Promise<RunningTarget[]> {
  const r = await q.query<{ run_id: string; worker_id: string; scenario: string; metrics_url: string }>(
    `SELECT w.run_id, w.worker_id, r.scenario, w.metrics_url FROM run_workers w JOIN runs r ON r.run_id = w.run_id
     WHERE w.status = 'running' AND w.metrics_url IS NOT NULL ORDER BY w.run_id, w.worker_id LIMIT $1`,
    [limit]
  );
  return r.rows.map((x) => ({
    runId: x.run_id,
    workerId: x.worker_id,
    scenario: x.scenario,
    metricsUrl: x.metrics_url,
  }));
}
