/**
 * Root cause: GET /api/traces/:traceId/rca (one trace, its baseline and kernel events gathered by the service),
 * GET /api/rca?from&to[&service][&maxTraces] (a time range, from the traces the proxy reads: nothing to upload), and
 * POST /api/rca (an incident window given as data: OTLP JSON traces, optional baseline and kernel events; the body may
 * be gzip- or deflate-encoded, its decoded size bounded by HOPSCOPE_PROXY_BODY_LIMIT: past it, a 413).
 */
import { Router } from 'express';
import { formatZodError, RcaWindowRequest, type Span } from '../../../contract';
import { badRequest } from '../http/errors';
import { nameParam, numberParam, timeRange } from '../http/params';
import { otlpToSpans, OtlpFormatError } from '../otlp/normalize';
import { RcaConfigSchema } from '../rca';
import type { RcaService } from '../services/rca';

function spansOf(body: unknown, what: string): Span[] {
  try {
    return otlpToSpans(body);
  } catch (err) {
    if (err instanceof OtlpFormatError) throw badRequest(`${what}: ${err.message}`);
    throw err;
  }
}

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
        maxTraces: floorOrUndefined(numberParam(q, 'maxTraces', 1, 5000)),
      })
    );
  });

  r.post('/rca', (req, res) => {
    const parsed = RcaWindowRequest.safeParse(req.body);
    if (!parsed.success) throw badRequest(formatZodError(parsed.error, { root: 'body' }));
    const b = parsed.data;
    if (b.traces === undefined || b.traces === null)
      throw badRequest('body.traces: OTLP JSON traces of the incident window are required');
    const config = b.config === undefined ? undefined : RcaConfigSchema.safeParse(b.config);
    if (config && !config.success) throw badRequest(`config: ${formatZodError(config.error)}`);
    const traces = spansOf(b.traces, 'traces');
    if (!traces.length) throw badRequest('traces: no spans in the given OTLP JSON');
    const baseline = b.baseline === undefined ? undefined : spansOf(b.baseline, 'baseline');
    res.json(rca.forWindow({ traces, baseline, kernelEvents: b.kernelEvents, config: config?.data }));
  });
  return r;
}
