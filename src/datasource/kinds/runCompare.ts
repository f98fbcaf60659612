/**
 * `runCompare`: which hop changed between this run and another (GET /runs/:runId/compare/:baselineRunId): the ranked
 * hops with their evidence (the query's refId), per-hop deltas (`hops`) and the client's figures side by side (`client`).
 * Both runs' capacity (their records' `capacity`: max good rate and knee) joins the side-by-side figures; a record that
 * cannot be read leaves its side empty. No other run picked: no call, a notice saying how to pick one.
 */
import { api } from '../../api/client';
import { frame } from '../frames/frame';
import { runCompareFrames, runCompareNotices } from '../frames/runs';
import { answerFrames, defineKind, type KindResult } from '../kind';
import { fetchRun } from './run';

export interface RunCompareQuery {
  runId: string;
  /** The run to compare with (a variable or URL state); empty: nothing to compare yet. */
  baselineRunId?: string;
}

export const runCompare = defineKind<RunCompareQuery>({
  timeRange: false,
  run: async (q, ctx): Promise<KindResult> => {
    if (!q.baselineRunId) {
      return {
        frames: [
          frame([], {
            refId: ctx.refId,
            meta: { notices: [{ severity: 'info', text: 'Pick a run to compare with ("Compare with…" above).' }] },
          }),
        ],
      };
    }
    const capacityOf = (runId: string) =>
      fetchRun(runId).then(
        (r) => (r.ok ? (r.data.capacity ?? null) : null),
        () => null
      );
    const answer = api.runCompare(q.runId, q.baselineRunId);
    const [run, baseline] = await Promise.all([capacityOf(q.runId), capacityOf(q.baselineRunId)]);
    return answerFrames(ctx, answer, (a) => runCompareFrames(a, ctx.refId, { run, baseline }), runCompareNotices);
  },
});
