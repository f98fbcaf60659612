/**
 * `runTtft`: client vs server time to first token over the run's window (GET /runs/:runId/ttft): P50/P99 per side
 * over time (`series`), the figures per clock (`layers`) and the client's mean part by part (`gap`), with what a reader
 * must know (populations, estimates, remainders) as notices.
 */
import { api } from '../../api/client';
import { runTtftFrames, runTtftNotices } from '../frames/runs';
import { answerFrames, defineKind } from '../kind';

export interface RunTtftQuery {
  runId: string;
}

export const runTtft = defineKind<RunTtftQuery>({
  timeRange: false,
  run: (q, ctx) => answerFrames(ctx, api.runTtft(q.runId), (a) => runTtftFrames(a, ctx.refId), runTtftNotices),
});
