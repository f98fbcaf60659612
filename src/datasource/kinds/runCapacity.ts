/**
 * `runCapacity`: a sweep's or ramp's offered vs achieved vs goodput per step, with the knee (GET /runs/:runId →
 * `summary.steps` and `capacity`); no frames for a run without capacity. The record is the run's own, whatever the
 * page's time range, and read once per refresh with the page's other run panels.
 */
import { capacityStepsFrame } from '../frames/capacity';
import { answerFrames, defineKind } from '../kind';
import { fetchRun } from './run';

export interface RunCapacityQuery {
  runId: string;
}

export const runCapacity = defineKind<RunCapacityQuery>({
  timeRange: false,
  run: (q, ctx) => answerFrames(ctx, fetchRun(q.runId), (a) => capacityStepsFrame(a, ctx.refId)),
});
