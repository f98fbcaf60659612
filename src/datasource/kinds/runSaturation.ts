/**
 * `runSaturation`: one hop's saturation signals over a sweep's or ramp's window (GET /runs/:runId/saturation), the
 * signals the capacity analysis decided on (engine queue, running and KV cache for an LLM hop; CPU, GPU, network for
 * the others). The run page draws a panel per hop; they share one call per refresh.
 */
import { api } from '../../api/client';
import { saturationFrames, saturationNotices } from '../frames/capacity';
import { answerFrames, defineKind, shared } from '../kind';

export interface RunSaturationQuery {
  runId: string;
  /** The hop (service) whose signals to show; absent: every hop's. */
  service?: string;
}

export const fetchRunSaturation = (runId: string) => shared(`runSaturation:${runId}`, () => api.runSaturation(runId));

export const runSaturation = defineKind<RunSaturationQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(ctx, fetchRunSaturation(q.runId), (a) => saturationFrames(a, ctx.refId, q.service), saturationNotices),
});
