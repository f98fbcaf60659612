/**
 * Notable kernel events kept past the exporters' rings (failed or slow connects and TLS handshakes, retransmits, GPU
 * allocation failures), so root cause still has kernel evidence for a window the rings no longer cover. Each event's
 * identity is hashed into a dedupe key: re-reading a stream (a reconnect, a second proxy feeding the same exporter)
 * never inserts it twice. Retention deletes by time and remembers its cut, so a query can say "nothing kept before X".
 */
import { createHash } from 'node:crypto';
import { KernelEvent, type KernelEvent as KernelEventT, type KernelEventType } from '../../../contract';
import type { Queryable } from './types';

export const KERNEL_EVIDENCE_LIMITS = { batch: 1000, page: 10_000, detailBytes: 4096, commChars: 64 } as const;

/** The event's identity: where (node, pid), what (type, comm) and when; detail and duration tell apart events of one instant. */
export function dedupeKey(e: KernelEventT): string {
  const id = [
    e.node ?? '',
    e.ts,
    e.type,
    e.pid,
    e.comm,
    e.durationMs ?? '',
    e.traceId ?? '',
    e.mode,
    JSON.stringify(e.detail),
  ].join('\u0000');
  return createHash('sha256').update(id).digest('base64url').slice(0, 32);
}

export interface InsertOutcome {
  inserted: number;
  /** Already kept (the same event read again). */
  duplicates: number;
  /** Not valid events (or too big): skipped, with the first reason. */
  rejected: number;
  firstRejection?: string;
}

/** Keeps a batch of events (at most KERNEL_EVIDENCE_LIMITS.batch per call, in one statement). */
export async function insertKernelEvents(
  q: Queryable,
  events: unknown[],
  receivedMs = Date.now()
): Promise<InsertOutcome> {
  if (events.length > KERNEL_EVIDENCE_LIMITS.batch)
    throw new RangeError(
      `insertKernelEvents: ${events.length} events in one batch, at most ${KERNEL_EVIDENCE_LIMITS.batch}`
    );
  const out: InsertOutcome = { inserted: 0, duplicates: 0, rejected: 0 };
  const rows: Array<Record<string, unknown>> = [];
  const seen = new Set<string>();
  for (const raw of events) {
    const p = KernelEvent.safeParse(raw);
    let why: string | undefined;
    if (!p.success)
      why = p.error.issues
        .slice(0, 2)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ');
    else if (Buffer.byteLength(JSON.stringify(p.data.detail)) > KERNEL_EVIDENCE_LIMITS.detailBytes)
      why = `detail over ${KERNEL_EVIDENCE_LIMITS.detailBytes} bytes`;
    if (why || !p.success) {
      out.rejected++;
      out.firstRejection ??= why;
      continue;
    }
    const e = p.data;
    const key = dedupeKey(e);
    if (seen.has(key)) {
      out.duplicates++;
      continue;
    }
    seen.add(key);
    rows.push({
      dedupe_key: key,
      ts: e.ts,
      type: e.type,
      pid: e.pid,
      comm: e.comm.slice(0, KERNEL_EVIDENCE_LIMITS.commChars),
      pod: e.pod ?? null,
      namespace: e.namespace ?? null,
      node: e.node ?? null,
      duration_ms: e.durationMs ?? null,
      trace_id: e.traceId ?? null,
      mode: e.mode,
      detail: e.detail,
    });
  }
  if (!rows.length) return out;
  // One parameter for the whole batch: jsonb_to_recordset turns it into rows (the same on PGlite and PostgreSQL).
  const r = await q.query(
    `INSERT INTO kernel_events (dedupe_key, ts, type, pid, comm, pod, namespace, node, duration_ms, trace_id, mode, detail, received_ms)
     SELECT dedupe_key, ts, type, pid, comm, pod, namespace, node, duration_ms, trace_id, mode, detail, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(dedupe_key text, ts double precision, type text, pid integer, comm text, pod text, namespace text,
            node text, duration_ms double precision, trace_id text, mode text, detail jsonb)
     ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
    [JSON.stringify(rows), receivedMs]
  );
  out.inserted = r.rowCount;
  out.duplicates += rows.length - r.rowCount;
  return out;
}

export interface KernelEvidenceQuery {
  from: number;
  to: number;
  /** At least one of pod, traceId, pid (+ node) narrows it; none: every kept event of the window. */
  pod?: string;
  traceId?: string;
  pid?: number;
  node?: string;
  types?: KernelEventType[];
  limit?: number;
}

export interface KernelEvidenceAnswer {
  events: KernelEventT[];
  /** More matched than `limit`: the earliest `limit` were returned. */
  truncated: boolean;
  /** The oldest event still kept (any pod), null when none is. */
  earliestKeptMs: number | null;
  /** The last retention cut: nothing before it is kept any more; null when retention never ran. */
  retainedFromMs: number | null;
  /** True when part of [from, to] lies before the retention cut: missing evidence there is "retention passed". */
  windowPrunedByRetention: boolean;
}

type EventRow = {
  ts: number;
  type: KernelEventType;
  pid: number;
  comm: string;
  pod: string | null;
  namespace: string | null;
  node: string | null;
  duration_ms: number | null;
  trace_id: string | null;
  mode: 'live' | 'replay';
  detail: Record<string, unknown>;
};

function eventOf(r: EventRow): KernelEventT {
  return {
    ts: r.ts,
    type: r.type,
    pid: r.pid,
    comm: r.comm,
    ...(r.pod !== null ? { pod: r.pod } : {}),
    ...(r.namespace !== null ? { namespace: r.namespace } : {}),
    ...(r.node !== null ? { node: r.node } : {}),
    ...(r.duration_ms !== null ? { durationMs: r.duration_ms } : {}),
    ...(r.trace_id !== null ? { traceId: r.trace_id } : {}),
    detail: r.detail,
    mode: r.mode,
  };
}

/** Kept events of a window (by pod, trace id or pid), oldest first, with what retention has already removed. */
export async function queryKernelEvidence(q: Queryable, k: KernelEvidenceQuery): Promise<KernelEvidenceAnswer> {
  const limit = Math.min(Math.max(1, k.limit ?? 1000), KERNEL_EVIDENCE_LIMITS.page);
  const params: unknown[] = [k.from, k.to];
  const where = ['ts >= $1', 'ts <= $2'];
  const add = (sql: string, v: unknown): void => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (k.pod !== undefined) add('pod = ?', k.pod);
  if (k.traceId !== undefined) add('trace_id = ?', k.traceId);
  if (k.pid !== undefined) add('pid = ?', k.pid);
  if (k.node !== undefined) add('node = ?', k.node);
  if (k.types?.length) add('type = ANY(?::text[])', k.types);
  params.push(limit + 1);
  const rows = (
    await q.query<EventRow>(
      `SELECT ts, type, pid, comm, pod, namespace, node, duration_ms, trace_id, mode, detail FROM kernel_events WHERE ${where.join(' AND ')} ORDER BY ts, id LIMIT $${params.length}`,
      params
    )
  ).rows;
  const cover = await keptCoverage(q);
  return {
    events: rows.slice(0, limit).map(eventOf),
    truncated: rows.length > limit,
    ...cover,
    windowPrunedByRetention: cover.retainedFromMs !== null && k.from < cover.retainedFromMs,
  };
}

/** What is kept: the oldest event and the last retention cut. */
export async function keptCoverage(
  q: Queryable
): Promise<{ earliestKeptMs: number | null; retainedFromMs: number | null }> {
  const r = await q.query<{ earliest: number | null; cut: number | null }>(
    'SELECT (SELECT min(ts) FROM kernel_events) AS earliest, (SELECT pruned_before_ms FROM kernel_evidence_meta WHERE id = 1) AS cut'
  );
  return { earliestKeptMs: r.rows[0]?.earliest ?? null, retainedFromMs: r.rows[0]?.cut ?? null };
}

/**
 * Retention: deletes events older than `beforeMs`, at most `batch` per call (call again while it returns `more`, so
 * one long delete never holds the table), and records the cut.
 */
export async function pruneKernelEvidence(
  q: Queryable,
  beforeMs: number,
  batch = 10_000
): Promise<{ deleted: number; more: boolean }> {
  const r = await q.query(
    'DELETE FROM kernel_events WHERE id IN (SELECT id FROM kernel_events WHERE ts < $1 ORDER BY ts LIMIT $2)',
    [beforeMs, batch]
  );
  const more = r.rowCount >= batch;
  if (more) return { deleted: r.rowCount, more }; // the cut is recorded once everything before it is gone
  await q.query(
    `INSERT INTO kernel_evidence_meta (id, pruned_before_ms) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET pruned_before_ms = GREATEST(kernel_evidence_meta.pruned_before_ms, EXCLUDED.pruned_before_ms)`,
    [beforeMs]
  );
  return { deleted: r.rowCount, more };
}
