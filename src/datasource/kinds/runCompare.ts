/**
 * `runCompare`: which hop changed between this run and another (GET /runs/:runId/compare/:baselineRunId): the ranked
 * hops with their evidence (the query's refId), per-hop deltas (`hops`) and the client's figures side by side (`client`).
 * No other run picked: no call, a notice saying how to pick one.
 */
import { api } from '../../api/client';
import { frame } from '../frames/frame';
import { runCompareFrames, runCompareNotices } from '../frames/runs';
import { answerFrames, defineKind, type KindResult } from '../kind';

export interface RunCompareQuery {
  runId: string;
  /** The run to compare with (a variable or URL state); empty: nothing to compare yet. */
  baselineRunId?: string;
}

export const runCompare = defineKind<RunCompareQuery>({
  timeRange: false,
  run: (q, ctx): Promise<KindResult> => {
    if (!q.baselineRunId) {
      return Promise.resolve({
        frames: [
          frame([], {
            refId: ctx.refId,
            meta: { notices: [{ severity: 'info', text: 'Pick a run to compare with ("Compare with…" above).' }] },
          }),
        ],
      });
    }
    return answerFrames(
      ctx,
      api.runCompare(q.runId, q.baselineRunId),
      (a) => runCompareFrames(a, ctx.refId),
      runCompareNotices
    );
  },
});
