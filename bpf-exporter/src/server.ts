/** The exporter's HTTP API: /health, /metrics, /events, /events/stream (SSE), /register. */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import type { ExporterConfig } from './config';
import { Pipeline } from './core/pipeline';
import { parseEventQuery } from './http/params';
import { ALL_PROBES } from './probes';

const Registration = z.object({
  pid: z.number().int().positive(),
  pod: z.string().min(1).max(253),
  namespace: z.string().min(1).max(253).optional(),
  node: z.string().min(1).max(253).optional(),
  service: z.string().min(1).max(253).optional(),
}).strict();

function fail(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

export interface Exporter {
  pipeline: Pipeline;
  server: Server;
  url: string;
  port: number;
  stop(): Promise<void>;
}

export function createApp(pipeline: Pipeline, cfg: Pick<ExporterConfig, 'maxRangeMs' | 'maxEventsPerQuery'>): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '16kb' }));

  app.get('/health', (_req, res) => { res.json(pipeline.health()); });

  app.get('/metrics', async (_req, res) => {
    res.set('content-type', pipeline.registry.contentType);
    res.send(await pipeline.registry.metrics());
  });

  app.get('/events', (req, res) => {
    const q = parseEventQuery(req.query, { maxRangeMs: cfg.maxRangeMs, maxLimit: cfg.maxEventsPerQuery });
    if ('error' in q) return fail(res, 400, 'bad_request', q.error);
    const { events, truncated } = pipeline.ring.query(q.filter, q.limit);
    // suppressed: events of this window (types, pod, pid) over the per-event budget, counted in /metrics but not here.
    res.json({ events, dropped: pipeline.ring.evicted, suppressed: pipeline.suppressedIn(q.filter), truncated, mode: pipeline.mode });
  });

  app.get('/events/stream', (req, res) => {
    const q = parseEventQuery(req.query, { maxRangeMs: cfg.maxRangeMs, maxLimit: cfg.maxEventsPerQuery }, true);
    if ('error' in q) return fail(res, 400, 'bad_request', q.error);
    pipeline.sse.add(res, q.filter, { mode: pipeline.mode });
  });

  app.get('/register', (_req, res) => { res.json({ registrations: pipeline.pids.list() }); });

  app.post('/register', (req, res) => {
    const r = Registration.safeParse(req.body);
    if (!r.success) {
      const i = r.error.issues[0];
      return fail(res, 400, 'bad_request', `${i.path.join('.') || 'body'}: ${i.message}`);
    }
    const reg = pipeline.pids.set(r.data);
    pipeline.attributor.forget(r.data.pid);
    res.status(201).json(reg);
  });

  app.delete('/register/:pid', (req, res) => {
    const pid = String(req.params.pid);
    if (!/^\d+$/.test(pid)) return fail(res, 400, 'bad_request', 'pid must be a positive integer');
    if (!pipeline.pids.delete(Number(pid))) return fail(res, 404, 'not_found', `pid ${pid} is not registered`);
    pipeline.attributor.forget(Number(pid));
    res.status(204).end();
  });

  app.use((_req, res) => fail(res, 404, 'not_found', 'no such route; see /health, /metrics, /events, /events/stream, /register'));
  app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 500;
    fail(res, status, status === 500 ? 'internal' : 'bad_request', err.message);
  });
  return app;
}

/** Builds the pipeline from config, starts probes (or the replay) and the HTTP server. */
export async function startExporter(cfg: ExporterConfig, log: Logger = pino({ level: cfg.logLevel })): Promise<Exporter> {
  const pipeline = new Pipeline({
    probes: ALL_PROBES.filter((p) => cfg.probes.includes(p.name)),
    probeOptions: { nodeBinary: cfg.nodeBinary, libssl: cfg.libssl, libcuda: cfg.libcuda, traceparentSampleEvery: cfg.traceparentSampleEvery, selfPid: process.pid },
    bpftrace: cfg.bpftrace,
    node: cfg.node,
    ringSize: cfg.ringSize,
    replay: cfg.replayFile ? { file: cfg.replayFile, timing: cfg.replayTiming } : undefined,
    recordFile: cfg.recordFile,
    perfPages: cfg.perfPages,
    batchPauseMs: cfg.batchPauseMs,
    kit: { budget: cfg.eventBudget, flushMs: cfg.flushMs },
    log,
  });
  const app = createApp(pipeline, cfg);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(cfg.port, cfg.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const port = (server.address() as AddressInfo).port;
  await pipeline.start();
  const url = `http://${cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host}:${port}`;
  log.info({ url, mode: pipeline.mode, probes: cfg.probes }, 'bpf-exporter listening');
  return {
    pipeline, server, url, port,
    async stop() {
      await pipeline.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
