/**
 * `runs`: the load-test runs overlapping the window (GET /runs), newest first, as a table whose rows open each run's
 * page over its own window; a running run shows its live heartbeat figures (the page re-runs the query while any runs).
 * With `marks`, the runs' starts and ends as annotations instead (the Overview marks them on its time series).
 */
import type { RunStatus } from '../../../contract';
import { api } from '../../api/client';
import { runMarksFrame, runsFrame, runsNotices } from '../frames/runs';
import { answerFrames, defineKind } from '../kind';

export interface RunsQuery {
  scenario?: string;
  status?: RunStatus | string;
  /** At most this many runs (the proxy's limit is 1,000). */
  limit?: number;
  /** The runs' starts and ends as annotations (an annotations layer of another page), not as a table. */
  marks?: boolean;
}

export const runs = defineKind<RunsQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.runs({
        from: ctx.from,
        to: ctx.to,
        scenario: q.scenario || undefined,
        status: q.status || undefined,
        limit: q.limit ?? 1000,
      }),
      (a) => [q.marks ? runMarksFrame(a, Date.now()) : runsFrame(a, Date.now())],
      (a) => (q.marks ? [] : runsNotices(a))
    ),
});
