/**
 * Root-cause answers saved for a postmortem to link to (`/api/rca/answers/:id`, say): the answer as it was given,
 * with the trace id or window it was about. An answer is validated as the contract's RcaAnswer and stored whole
 * (a run comparison's extra fields included).
 */
import { randomUUID } from 'node:crypto';
import { RcaAnswer } from '../../../contract';
import type { Queryable } from './types';

export const RCA_ANSWER_LIMITS = { bytes: 1024 * 1024, titleChars: 200, page: 500 } as const;

export class RcaAnswerInputError extends Error {
  override name = 'RcaAnswerInputError';
  readonly code = 'invalid';
}

export interface SavedRcaAnswer {
  id: string;
  traceId: string | null;
  fromMs: number | null;
  toMs: number | null;
  title: string | null;
  createdMs: number;
  /** The answer as saved (RcaAnswer, possibly with more fields). */
  answer: RcaAnswer & Record<string, unknown>;
}

export interface SaveRcaAnswer {
  answer: unknown;
  traceId?: string;
  fromMs?: number;
  toMs?: number;
  title?: string;
}

/** Saves an answer and returns it with its new id. */
export async function saveRcaAnswer(q: Queryable, s: SaveRcaAnswer, nowMs = Date.now()): Promise<SavedRcaAnswer> {
  const p = RcaAnswer.safeParse(s.answer);
  if (!p.success)
    throw new RcaAnswerInputError(
      `not a root-cause answer: ${p.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(answer)'}: ${i.message}`)
        .join('; ')}`
    );
  const text = JSON.stringify(s.answer);
  if (Buffer.byteLength(text) > RCA_ANSWER_LIMITS.bytes)
    throw new RcaAnswerInputError(
      `the answer is ${Buffer.byteLength(text)} bytes, over the ${RCA_ANSWER_LIMITS.bytes}-byte limit`
    );
  const traceId = s.traceId ?? p.data.traceId ?? null;
  if (traceId !== null && !/^[0-9a-f]{32}$/.test(traceId))
    throw new RcaAnswerInputError(`trace id "${traceId}" is not 32 lowercase hex digits`);
  if (s.fromMs !== undefined && s.toMs !== undefined && s.fromMs > s.toMs)
    throw new RcaAnswerInputError(`fromMs (${s.fromMs}) is after toMs (${s.toMs})`);
  const title = s.title?.slice(0, RCA_ANSWER_LIMITS.titleChars) ?? null;
  const id = randomUUID();
  await q.query(
    'INSERT INTO rca_answers (id, trace_id, from_ms, to_ms, title, answer, created_ms) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)',
    [id, traceId, s.fromMs ?? null, s.toMs ?? null, title, text, nowMs]
  );
  return {
    id,
    traceId,
    fromMs: s.fromMs ?? null,
    toMs: s.toMs ?? null,
    title,
    createdMs: nowMs,
    answer: JSON.parse(text),
  };
}

type MetaRow = {
  id: string;
  trace_id: string | null;
  from_ms: number | null;
  to_ms: number | null;
  title: string | null;
  created_ms: number;
};
type Row = MetaRow & { answer: SavedRcaAnswer['answer'] };
export type RcaAnswerMeta = Omit<SavedRcaAnswer, 'answer'>;
const meta = (r: MetaRow): RcaAnswerMeta => ({
  id: r.id,
  traceId: r.trace_id,
  fromMs: r.from_ms,
  toMs: r.to_ms,
  title: r.title,
  createdMs: r.created_ms,
});

export async function getRcaAnswer(q: Queryable, id: string): Promise<SavedRcaAnswer | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  const r = (
    await q.query<Row>(
      'SELECT id, trace_id, from_ms, to_ms, title, created_ms, answer FROM rca_answers WHERE id = $1',
      [id]
    )
  ).rows[0];
  return r ? { ...meta(r), answer: r.answer } : null;
}

const META = 'id, trace_id, from_ms, to_ms, title, created_ms';

/** Newest first, by trace id when given; without the answers themselves (getRcaAnswer has them). */
export async function listRcaAnswers(
  q: Queryable,
  o: { traceId?: string; limit?: number } = {}
): Promise<RcaAnswerMeta[]> {
  const limit = Math.min(Math.max(1, o.limit ?? 50), RCA_ANSWER_LIMITS.page);
  const r =
    o.traceId !== undefined
      ? await q.query<MetaRow>(
          `SELECT ${META} FROM rca_answers WHERE trace_id = $1 ORDER BY created_ms DESC LIMIT $2`,
          [o.traceId, limit]
        )
      : await q.query<MetaRow>(`SELECT ${META} FROM rca_answers ORDER BY created_ms DESC LIMIT $1`, [limit]);
  return r.rows.map(meta);
}

/** Removes one saved answer; false when there was none. */
export async function deleteRcaAnswer(q: Queryable, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM rca_answers WHERE id = $1 RETURNING id', [id])).rowCount > 0;
}

/** Retention: deletes answers saved before `beforeMs`, at most `batch` per call (call again while `more`). */
export async function pruneRcaAnswers(
  q: Queryable,
  beforeMs: number,
  batch: number
): Promise<{ deleted: number; more: boolean }> {
  const r = await q.query(
    'DELETE FROM rca_answers WHERE id IN (SELECT id FROM rca_answers WHERE created_ms < $1 ORDER BY created_ms LIMIT $2)',
    [beforeMs, batch]
  );
  return { deleted: r.rowCount, more: r.rowCount >= batch };
}
