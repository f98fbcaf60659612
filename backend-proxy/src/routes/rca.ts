/**
 * Root cause: GET /api/traces/:traceId/rca (one trace, its baseline and kernel events gathered by the service) and
 * POST /api/rca (an incident window given as data: OTLP JSON traces, optional baseline and kernel events).
 */
import { Router } from 'express';
import { formatZodError, RcaWindowRequest, type Span } from '../../../contract';
import { badRequest } from '../http/errors';
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

export function rcaRoutes(rca: RcaService): Router {
  const r = Router();

  r.get('/traces/:traceId/rca', async (req, res) => {
    res.json(await rca.forTrace(String(req.params.traceId)));
  });

  r.post('/rca', (req, res) => {
    const parsed = RcaWindowRequest.safeParse(req.body);
    if (!parsed.success) throw badRequest(formatZodError(parsed.error, { root: 'body' }));
    const b = parsed.data;
    if (b.traces === undefined || b.traces === null) throw badRequest('body.traces: OTLP JSON traces of the incident window are required');
    const config = b.config === undefined ? undefined : RcaConfigSchema.safeParse(b.config);
    if (config && !config.success) throw badRequest(`config: ${formatZodError(config.error)}`);
    const traces = spansOf(b.traces, 'traces');
    if (!traces.length) throw badRequest('traces: no spans in the given OTLP JSON');
    const baseline = b.baseline === undefined ? undefined : spansOf(b.baseline, 'baseline');
    res.json(rca.forWindow({ traces, baseline, kernelEvents: b.kernelEvents, config: config?.data }));
  });
  return r;
}
