/** GET /api/traces (search) and GET /api/traces/:traceId, from Tempo or the embedded store. */
import { Router } from 'express';
import { TraceStatus } from '../../../contract';
import { enumParam, nameParam, numberParam, timeRange } from '../http/params';
import type { TraceService } from '../services/traces';

export function traceRoutes(traces: TraceService): Router {
  const r = Router();
  r.get('/traces', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const range = timeRange(q, 60 * 60_000);
    res.json(
      await traces.search({
        ...range,
        service: nameParam(q, 'service'),
        minDurationMs: numberParam(q, 'minDurationMs', 0, 86_400_000),
        maxDurationMs: numberParam(q, 'maxDurationMs', 0, 86_400_000),
        status: enumParam(q, 'status', TraceStatus.options),
        limit: numberParam(q, 'limit', 1, 1000) ?? 100,
        sort: enumParam(q, 'sort', ['recent', 'duration'] as const) ?? 'recent',
      })
    );
  });

  r.get('/traces/:traceId', async (req, res) => {
    res.json(await traces.byId(String(req.params.traceId)));
  });
  return r;
}
