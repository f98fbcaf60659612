/**
 * `rca`: the ranked root cause of one trace (GET /traces/:traceId/rca): candidates, and the engine's critical path
 * (part `criticalPath`, skew-corrected) that the icicle draws.
 */
import { api } from '../../api/client';
import { rcaFrames, rcaNotices } from '../frames/traces';
import { answerFrames, defineKind, shared } from '../kind';

export interface RcaQuery {
  traceId: string;
}

export const fetchRca = (traceId: string) => shared(`rca:${traceId}`, () => api.traceRca(traceId));

export const rca = defineKind<RcaQuery>({
  timeRange: false,
  run: (q, ctx) => answerFrames(ctx, fetchRca(q.traceId), (a) => rcaFrames(a, ctx.refId), rcaNotices),
});
