/**
 * `run`: one load-test run's record (GET /runs/:runId) in parts — summary (the query's refId), `thresholds`, `faults`
 * (annotations), `faultList`, `quality`, `slowest`, `failed` — so each panel of the run page takes its part. The
 * record is the run's own, whatever the page's time range.
 */
import { api } from '../../api/client';
import { runFrames, runNotices, type RunPart } from '../frames/runs';
import { partRefId } from '../query';
import { answerFrames, defineKind, shared } from '../kind';

export interface RunQuery {
  runId: string;
  /** Only these parts (e.g. `['faults']` for an annotations layer); all when absent. */
  parts?: RunPart[];
}

/** One call per run and refresh, however many panels and layers ask for it. */
export const fetchRun = (runId: string) => shared(`run:${runId}`, () => api.run(runId));

export const run = defineKind<RunQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(
      ctx,
      fetchRun(q.runId),
      (a) => {
        const frames = runFrames(a, ctx.refId, Date.now());
        if (!q.parts?.length) {
          return frames;
        }
        const wanted = new Set(q.parts.map((p) => (p === 'summary' ? ctx.refId : partRefId(ctx.refId, p))));
        // An annotations layer reads the frames as they come: a single part keeps the query's own refId.
        return frames
          .filter((f) => wanted.has(f.refId ?? ''))
          .map((f) => (q.parts!.length === 1 ? { ...f, refId: ctx.refId } : f));
      },
      (a) => (q.parts?.length ? [] : runNotices(a))
    ),
});
