/**
 * Root cause: GET /api/traces/:traceId/rca (one trace, its baseline and kernel events gathered by the service),
 * GET /api/rca?from&to[&service][&maxTraces] (a time range, from the traces the proxy reads: nothing to upload; at
 * most 1,000 traces per request, and within the global budget of window work, else 503 + Retry-After), and
 * POST /api/rca (an incident window given as data: OTLP JSON traces, optional baseline and kernel events; the body may
 * be gzip- or deflate-encoded, its decoded size bounded by HOPSCOPE_PROXY_BODY_LIMIT: past it, a 413). That body is
 * read raw and parsed in the engine's worker with the ranking (services/rca-window-request.ts), off the event loop.
 */
import { Router } from 'express';
import { badRequest } from '../http/errors';
import { nameParam, numberParam, timeRange } from '../http/params';
import type { RcaService } from '../services/rca';

/** The request POST /api/rca reads raw (app.ts leaves it to this route's parser): the engine's worker parses it. */
export const isRawRcaBody = (method: string, url: string): boolean => method === 'POST' && /^\/rca(\?|$)/.test(url);

const floorOrUndefined = (n: number | undefined): number | undefined => (n === undefined ? undefined : Math.floor(n));

export function rcaRoutes(rca: RcaService): Router {
  const r = Router();

  r.get('/traces/:traceId/rca', async (req, res) => {
    res.json(await rca.forTrace(String(req.params.traceId)));
  });

  r.get('/rca', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const range = timeRange(q, 15 * 60_000, 24 * 3600_000);
    res.json(
      await rca.forRange({
        range,
        service: nameParam(q, 'service'),
        // Past the per-request cap (RANGE_MAX_TRACES) it is cut, and the answer's `missing` says so.
        maxTraces: floorOrUndefined(numberParam(q, 'maxTraces', 1, 1_000_000)),
      })
    );
  });

  r.post('/rca', async (req, res) => {
    if (!Buffer.isBuffer(req.body) || !req.is('application/json'))
      throw badRequest('body: the incident window as application/json ({"traces": OTLP JSON, …}) is required');
    res.json(await rca.forWindowBody(req.body));
  });
  return r;
}
