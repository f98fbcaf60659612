/**
 * `runFallback`: a run's answers per model path (primary vs fall-back) and the fall-back share over time (GET
 * /runs/:runId → `summary.fallback`), as two parts: `<refId>:paths` and `<refId>:rate`; no frames for a run whose
 * answers name no model. The record is the run's own, whatever the page's time range.
 */
import { fallbackPathsFrame, fallbackRateFrame } from '../frames/fallback';
import { answerFrames, defineKind } from '../kind';
import { partRefId } from '../query';
import { fetchRun } from './run';

export interface RunFallbackQuery {
  runId: string;
}

export const runFallback = defineKind<RunFallbackQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(ctx, fetchRun(q.runId), (a) => [
      ...fallbackPathsFrame(a, partRefId(ctx.refId, 'paths')),
      ...fallbackRateFrame(a, partRefId(ctx.refId, 'rate')),
    ]),
});
