/**
 * `runs`: the load-test runs overlapping the window (GET /runs), newest first, as a table whose rows open each run's
 * page over its own window; a running run shows its live heartbeat figures (the page re-runs the query while any runs).
 */
import type { RunStatus } from '../../../contract';
import { api } from '../../api/client';
import { runsFrame, runsNotices } from '../frames/runs';
import { answerFrames, defineKind } from '../kind';

export interface RunsQuery {
  scenario?: string;
  status?: RunStatus | string;
  /** At most this many runs (the proxy's limit is 1,000). */
  limit?: number;
}

export const runs = defineKind<RunsQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.runs({ from: ctx.from, to: ctx.to, scenario: q.scenario || undefined, status: q.status || undefined, limit: q.limit ?? 1000 }),
      (a) => [runsFrame(a, Date.now())],
      runsNotices
    ),
});
