/**
 * `runTtftRequests`: the client TTFT of a run's slowest and failed requests split along their traces and the engine's
 * own span (GET /runs/:runId/ttft/requests): per request (`requests`) and each part's mean (`average`).
 */
import { api } from '../../api/client';
import { runTtftRequestsFrames, runTtftRequestsNotices } from '../frames/run-ttft-requests';
import { answerFrames, defineKind } from '../kind';

export interface RunTtftRequestsQuery {
  runId: string;
}

export const runTtftRequests = defineKind<RunTtftRequestsQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(ctx, api.runTtftRequests(q.runId), (a) => runTtftRequestsFrames(a, ctx.refId), runTtftRequestsNotices),
});
