/**
 * `heatmap`: GPU activity per GPU / MIG instance (GET /gpu/heatmap) as a heatmap-rows frame; the services of the same
 * window (asked alongside) let each row link to its pod's drill-down.
 */
import { api } from '../../api/client';
import { heatmapFrame, heatmapNote } from '../frames/heatmap';
import { answerFrames, defineKind } from '../kind';
import { fetchServices } from './services';

export const heatmap = defineKind<Record<string, never>>({
  run: async (_q, ctx) => {
    const w = { from: ctx.from, to: ctx.to };
    const [answer, services] = await Promise.all([api.heatmap(w), fetchServices(w)]);
    return answerFrames(
      ctx,
      Promise.resolve(answer),
      (a) => [heatmapFrame(a, services.ok ? services.data : undefined)],
      (a) => [heatmapNote(a)]
    );
  },
});
