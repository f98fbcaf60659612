/**
 * Load-test runs (contract/runs.ts). The load generator's side: POST /api/runs (register, or join with `join: true`),
 * POST /api/runs/:runId/heartbeat, POST /api/runs/:runId/finish. The reader's side: GET /api/runs, GET /api/runs/:runId,
 * DELETE /api/runs/:runId (Editors: the run and its workers' reports), GET /api/runs/:runId/compare/:baselineRunId, GET /api/runs/:runId/ttft (client vs server TTFT), GET /api/runs/:runId/ttft/requests (the slowest and failed requests' client TTFT split along their traces), and GET /api/runs/targets (Prometheus HTTP service discovery of the
 * running workers' client metrics). The runs service's refusals become their status here; "database down" is 503 with
 * Retry-After, so the load generator retries instead of losing the run.
 */
import { Router, type ErrorRequestHandler } from 'express';
import { RunFinish, RunHeartbeat, RunId, RunRegistration, RunStatus, formatZodError } from '../../../contract';
import type { z } from 'zod';
import { badRequest, errorBody, HttpError } from '../http/errors';
import { enumParam, numberParam, parseTime, stringParam } from '../http/params';
import { RunsError, type RunsErrorCode, type RunsService } from '../runs';
import type { RunCompareService } from '../services/run-compare';
import type { RunTtftService } from '../services/run-ttft';
import type { RunTtftRequestsService } from '../services/run-ttft-requests';
import type { RunCapacityService } from '../services/run-capacity';

const CODE: Record<RunsErrorCode, string> = {
  invalid: 'bad_request',
  not_found: 'not_found',
  conflict: 'conflict',
  too_large: 'payload_too_large',
  unavailable: 'database_unavailable',
};

function body<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(raw);
  if (!r.success) throw badRequest(`${what}: ${formatZodError(r.error)}`);
  return r.data;
}

function runId(raw: string, what = 'runId'): string {
  if (!RunId.safeParse(raw).success)
    throw badRequest(
      `${what}: "${raw.slice(0, 60)}" is not a run id (1–128 letters, digits, _ . : -, starting with a letter or digit)`
    );
  return raw;
}

function timeParam(q: Record<string, unknown>, name: string): number | undefined {
  const raw = stringParam(q, name);
  if (raw === undefined || raw === '') return undefined;
  const t = parseTime(raw);
  if (t === undefined) throw badRequest(`${name}: "${raw.slice(0, 60)}" is not a time (epoch ms, ISO 8601 or now-15m)`);
  return t;
}

/** The runs service's typed refusals as `{error: {code, message}}`; unavailable carries Retry-After. */
const runsErrors: ErrorRequestHandler = (err, _req, res, next) => {
  if (!(err instanceof RunsError)) return next(err);
  if (err.code === 'unavailable') res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterS ?? 2))));
  res.status(err.httpStatus).json(errorBody(CODE[err.code], err.message));
};

/** `runs` absent: this proxy has no database (services built without one, as some tests do). */
export function runRoutes(
  runs: RunsService | undefined,
  compare: RunCompareService | undefined,
  ttft?: RunTtftService,
  ttftRequests?: RunTtftRequestsService,
  capacity?: RunCapacityService
): Router {
  const r = Router();
  const svc = (): RunsService => {
    if (!runs)
      throw new HttpError(503, 'database_unavailable', 'this proxy runs without a database, so it keeps no runs');
    return runs;
  };

  r.post('/runs', async (req, res) => {
    svc().checkMetricsUrl((req.body as { metricsUrl?: unknown } | undefined)?.metricsUrl, req.socket.remoteAddress);
    res.status(201).json(await svc().register(body(RunRegistration, req.body, 'run registration')));
  });

  r.post('/runs/:runId/heartbeat', async (req, res) => {
    res.json(await svc().heartbeat(runId(String(req.params.runId)), body(RunHeartbeat, req.body, 'heartbeat')));
  });

  r.post('/runs/:runId/finish', async (req, res) => {
    res.json(await svc().finish(runId(String(req.params.runId)), body(RunFinish, req.body, 'run finish')));
  });

  r.get('/runs', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const from = timeParam(q, 'from');
    const to = timeParam(q, 'to');
    if (from !== undefined && to !== undefined && from > to)
      throw badRequest(`from (${from}) must not be after to (${to})`);
    const scenario = stringParam(q, 'scenario');
    if (scenario !== undefined && (scenario.length > 200 || /[\u0000-\u001f]/.test(scenario)))
      throw badRequest('scenario: at most 200 printable characters');
    res.json(
      await svc().list({
        from,
        to,
        scenario: scenario || undefined,
        status: enumParam(q, 'status', RunStatus.options),
        limit: numberParam(q, 'limit', 1, 1000) ?? 100,
        offset: numberParam(q, 'offset', 0, 1_000_000) ?? 0,
      })
    );
  });

  // Before /runs/:runId, which would take "targets" for a run id.
  r.get('/runs/targets', async (_req, res) => {
    res.json(await svc().scrapeTargets());
  });

  r.get('/runs/:runId', async (req, res) => {
    const rec = await svc().get(runId(String(req.params.runId)));
    res.json({ ...rec, capacity: capacity ? await capacity.capacityOf(rec) : null });
  });

  // Editors (admin scope): the run and its workers' reports; a running run is a 409.
  r.delete('/runs/:runId', async (req, res) => {
    res.json(await svc().remove(runId(String(req.params.runId))));
  });

  r.get('/runs/:runId/saturation', async (req, res) => {
    const rec = await svc().get(runId(String(req.params.runId)));
    if (!capacity) throw new HttpError(503, 'no_capacity', 'this proxy reads no saturation signals (no runs service)');
    res.json(await capacity.saturationOf(rec));
  });

  r.get('/runs/:runId/compare/:baselineRunId', async (req, res) => {
    svc();
    res.json(
      await compare!.compare(runId(String(req.params.runId)), runId(String(req.params.baselineRunId), 'baselineRunId'))
    );
  });

  r.get('/runs/:runId/ttft', async (req, res) => {
    svc();
    res.json(await ttft!.ttft(runId(String(req.params.runId))));
  });

  r.get('/runs/:runId/ttft/requests', async (req, res) => {
    svc();
    res.json(await ttftRequests!.requests(runId(String(req.params.runId))));
  });

  r.use(runsErrors);
  return r;
}
