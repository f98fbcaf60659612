/** GET /api/annotations?from&to — the chain's injected faults in the range, for the time series. */
import { Router } from 'express';
import { timeRange } from '../http/params';
import type { FaultService } from '../services/faults';

export function annotationRoutes(faults: FaultService): Router {
  const r = Router();
  r.get('/annotations', async (req, res) => {
    res.json(await faults.inRange(timeRange(req.query as Record<string, unknown>)));
  });
  return r;
}
