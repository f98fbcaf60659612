/** GET /api/gpu/heatmap?from&to[&step][&pod][&namespace] — GPUs (or MIG instances) × time, coloured by SM activity. */
import { Router } from 'express';
import { alignRange, nameParam, stepMs, timeRange } from '../http/params';
import type { HeatmapService } from '../services/heatmap';

export function heatmapRoutes(heatmap: HeatmapService): Router {
  const r = Router();
  r.get('/gpu/heatmap', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const asked = timeRange(q);
    const step = stepMs(q, asked, 120);
    res.json(
      await heatmap.query({
        range: alignRange(asked, step),
        stepMs: step,
        pod: nameParam(q, 'pod'),
        namespace: nameParam(q, 'namespace'),
      })
    );
  });
  return r;
}
