/** GET /api/traces (search) and GET /api/traces/:traceId, from Tempo or the embedded store. */
import { Router } from 'express';
import { type TraceDetail, TraceStatus } from '../../../contract';
import type { ProxyConfig } from '../config';
import { HttpError, badRequest, notFound } from '../http/errors';
import { enumParam, nameParam, numberParam, timeRange } from '../http/params';
import { SourceError } from '../sources/http';
import type { Sources } from '../sources';

export const TRACE_ID_RE = /^[0-9a-fA-F]{1,32}$/;

/** One trace by id: 400 for a malformed id, 502 when the trace source fails, 404 when it has no such trace. */
export async function traceById(sources: Sources, id: string): Promise<TraceDetail> {
  if (!TRACE_ID_RE.test(id)) throw badRequest(`traceId: "${id.slice(0, 40)}" is not a hex trace id (1-32 hex digits)`);
  let detail: TraceDetail | undefined;
  try {
    detail = await sources.traces.get(id);
  } catch (err) {
    if (err instanceof SourceError) throw new HttpError(502, 'source_unavailable', err.message);
    throw err;
  }
  if (!detail) throw notFound(`trace ${id.toLowerCase().padStart(32, '0')} not found in ${sources.traces.name}`);
  return detail;
}

export function traceRoutes(_config: ProxyConfig, sources: Sources): Router {
  const r = Router();
  r.get('/traces', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const range = timeRange(q, 60 * 60_000);
    const query = {
      ...range,
      service: nameParam(q, 'service'),
      minDurationMs: numberParam(q, 'minDurationMs', 0, 86_400_000),
      maxDurationMs: numberParam(q, 'maxDurationMs', 0, 86_400_000),
      status: enumParam(q, 'status', TraceStatus.options),
      limit: numberParam(q, 'limit', 1, 1000) ?? 100,
      sort: enumParam(q, 'sort', ['recent', 'duration'] as const) ?? 'recent',
    };
    const t0 = performance.now();
    try {
      const traces = await sources.traces.search(query);
      res.json({ traces, sources: [{ source: sources.traces.name, ok: true, latencyMs: Math.round(performance.now() - t0) }] });
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      // Degrade, don't fail: an empty list plus the reason, so the panel says why.
      res.json({ traces: [], sources: [{ source: sources.traces.name, ok: false, latencyMs: Math.round(performance.now() - t0), error: err.message }] });
    }
  });

  r.get('/traces/:traceId', async (req, res) => {
    res.json(await traceById(sources, String(req.params.traceId)));
  });
  return r;
}
