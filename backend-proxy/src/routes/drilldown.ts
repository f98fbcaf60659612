/** The drill-down: GET /api/services → /api/services/:service/pods → /api/pods/:pod/kernel-events. */
import { Router } from 'express';
import { KernelEventType } from '../../../contract';
import { enumParam, numberParam, pathName, timeRange } from '../http/params';
import type { DrilldownService } from '../drilldown';

export function drilldownRoutes(drilldown: DrilldownService): Router {
  const r = Router();

  r.get('/services', async (req, res) => {
    res.json(await drilldown.services(timeRange(req.query as Record<string, unknown>)));
  });

  r.get('/services/:service/pods', async (req, res) => {
    const service = pathName(String(req.params.service), 'service');
    res.json(await drilldown.pods(service, timeRange(req.query as Record<string, unknown>)));
  });

  r.get('/pods/:pod/kernel-events', async (req, res) => {
    const pod = pathName(String(req.params.pod), 'pod');
    const q = req.query as Record<string, unknown>;
    const range = timeRange(q);
    const type = enumParam(q, 'type', KernelEventType.options);
    res.json(await drilldown.kernelEvents(pod, { range, type, limit: numberParam(q, 'limit', 1, 100_000) ?? 5000 }));
  });
  return r;
}
