/**
 * `rca`: the ranked root cause of one trace (GET /traces/:traceId/rca), or an answer saved of it (`answer`: GET
 * /rca/answers/:id, as it was when saved): candidates, and the engine's critical path (part `criticalPath`,
 * skew-corrected) that the icicle draws; the answer's own facts (kernel evidence, missing lines) on the candidates.
 */
import type { RcaAnswer, SavedRcaAnswerMeta, SourceStatus } from '../../../contract';
import { api, type ApiResult } from '../../api/client';
import { rcaFrames, rcaNotices } from '../frames/traces';
import { answerFrames, defineKind, shared } from '../kind';

export interface RcaQuery {
  traceId: string;
  /** A saved answer's id: show it instead of the root cause computed now. */
  answer?: string;
}

export const fetchRca = (traceId: string) => shared(`rca:${traceId}`, () => api.traceRca(traceId));

interface Shown {
  answer: RcaAnswer;
  saved?: SavedRcaAnswerMeta;
  /** The sources the live answer read (a dead one is a warning on the panel). */
  sources?: SourceStatus[];
}

async function shown(q: RcaQuery): Promise<ApiResult<Shown>> {
  if (!q.answer) {
    const res = await fetchRca(q.traceId);
    return res.ok ? { ok: true, data: { answer: res.data, sources: res.data.sources } } : res;
  }
  const res = await shared(`rca-answer:${q.answer}`, () => api.savedRca(q.answer!));
  if (!res.ok) {
    return res;
  }
  const { answer, ...saved } = res.data;
  return { ok: true, data: { answer: answer as RcaAnswer, saved } };
}

export const rca = defineKind<RcaQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(
      ctx,
      shown(q),
      (d) => rcaFrames(d.answer, ctx.refId, d.saved),
      (d) => [
        ...(d.saved
          ? [
              {
                severity: 'info' as const,
                text: `Saved answer ${d.saved.id}, as ranked on ${new Date(d.saved.createdMs).toISOString()}`,
              },
            ]
          : []),
        ...rcaNotices(d.answer),
      ]
    ),
});
