/**
 * The kernel-evidence keeper's bookkeeping next to the kept events: per exporter, the stream position up to which
 * every notable event is in `kernel_events` (a restarted proxy, or the proxy that takes the keeper's lease over,
 * resumes there with Last-Event-ID), and the windows known to lack evidence (a stream gap, events over the exporter's
 * per-event budget, events the keeper could not queue), so a root cause over such a window says so.
 */
import type { Queryable } from './types';

export const GAP_REASONS = ['evicted', 'exporter_restarted', 'ahead', 'suppressed', 'queue_full'] as const;
export type GapReason = (typeof GAP_REASONS)[number];

export interface StreamPosition {
  /** The exporter's base URL. */
  exporter: string;
  node: string | null;
  lastSeq: number;
  /** The time of that position (its last event's ts, epoch ms): events missed after it happened after this. */
  lastSeenMs: number;
  /** When evidence from this exporter began to be kept. */
  firstMs: number;
}

export interface EvidenceGap {
  exporter: string;
  node: string | null;
  fromMs: number;
  toMs: number;
  reason: GapReason;
  /** Events missed, when the exporter knows (null: not knowable, e.g. it restarted). */
  missed: number | null;
}

type PositionRow = {
  exporter: string;
  node: string | null;
  last_seq: string | number;
  last_seen_ms: number;
  first_ms: number;
};
const position = (r: PositionRow): StreamPosition => ({
  exporter: r.exporter,
  node: r.node,
  lastSeq: Number(r.last_seq),
  lastSeenMs: r.last_seen_ms,
  firstMs: r.first_ms,
});

export async function streamPositions(q: Queryable): Promise<Map<string, StreamPosition>> {
  const r = await q.query<PositionRow>(
    'SELECT exporter, node, last_seq, last_seen_ms, first_ms FROM kernel_stream_positions'
  );
  return new Map(r.rows.map((x) => [x.exporter, position(x)]));
}

/** Saves where the stream of `p.exporter` is; `first_ms` keeps its first value. */
export async function saveStreamPosition(q: Queryable, p: StreamPosition, nowMs = Date.now()): Promise<void> {
  if (!Number.isSafeInteger(p.lastSeq) || p.lastSeq < 0)
    throw new RangeError(`stream position ${p.lastSeq}: a non-negative integer`);
  await q.query(
    `INSERT INTO kernel_stream_positions (exporter, node, last_seq, last_seen_ms, first_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (exporter) DO UPDATE SET node = COALESCE(EXCLUDED.node, kernel_stream_positions.node), last_seq = EXCLUDED.last_seq,
       last_seen_ms = EXCLUDED.last_seen_ms, updated_ms = EXCLUDED.updated_ms`,
    [p.exporter, p.node, p.lastSeq, p.lastSeenMs, p.firstMs, nowMs]
  );
}

export async function recordGap(q: Queryable, g: EvidenceGap, nowMs = Date.now()): Promise<void> {
  if (!(g.fromMs <= g.toMs)) throw new RangeError(`gap from ${g.fromMs} to ${g.toMs}: from must not be after to`);
  await q.query(
    'INSERT INTO kernel_evidence_gaps (exporter, node, from_ms, to_ms, reason, missed, recorded_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [g.exporter, g.node, g.fromMs, g.toMs, g.reason, g.missed, nowMs]
  );
}

type GapRow = {
  exporter: string;
  node: string | null;
  from_ms: number;
  to_ms: number;
  reason: GapReason;
  missed: string | number | null;
};

/** Gaps overlapping [from, to], oldest first (at most `limit`). */
export async function gapsOverlapping(q: Queryable, from: number, to: number, limit = 100): Promise<EvidenceGap[]> {
  const r = await q.query<GapRow>(
    'SELECT exporter, node, from_ms, to_ms, reason, missed FROM kernel_evidence_gaps WHERE from_ms <= $2 AND to_ms >= $1 ORDER BY from_ms, id LIMIT $3',
    [from, to, Math.min(Math.max(1, limit), 1000)]
  );
  return r.rows.map((x) => ({
    exporter: x.exporter,
    node: x.node,
    fromMs: x.from_ms,
    toMs: x.to_ms,
    reason: x.reason,
    missed: x.missed === null ? null : Number(x.missed),
  }));
}

/** Retention of the gap records themselves. */
export async function pruneGaps(q: Queryable, beforeMs: number): Promise<number> {
  return (await q.query('DELETE FROM kernel_evidence_gaps WHERE to_ms < $1', [beforeMs])).rowCount;
}

/** Since when evidence has been kept (the first exporter read), null when never. */
export async function keptSinceMs(q: Queryable): Promise<number | null> {
  const r = await q.query<{ first: number | null }>('SELECT min(first_ms) AS first FROM kernel_stream_positions');
  return r.rows[0]?.first ?? null;
}
