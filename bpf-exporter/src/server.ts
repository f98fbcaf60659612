/**
 * The exporter's HTTP API: /health, /metrics, /events, /events/stream (SSE), /register.
 * With HOPSCOPE_BPF_TOKEN set, /register and the event API need `Authorization: Bearer <token>`; /health and /metrics
 * stay open (kubelet probes and Prometheus scrapes carry no token; what reaches the port at all is the
 * NetworkPolicy's business). Without a token the exporter binds loopback only (config.ts refuses anything else) and
 * answers only requests whose Host names loopback (DNS rebinding; contract/loopback-host.ts).
 * Slow clients cannot hold connections: headers must arrive within headersTimeout, a request within requestTimeout.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import { inClusterConnection, kubeconfigConnection, type KubeConnection } from './attribution/kubernetes/connection';
import type { ExporterConfig } from './config';
import { Pipeline } from './core/pipeline';
import { parseEventQuery } from './http/params';
import { ALL_PROBES } from './probes';
import { loopbackHostGuard } from '../../contract/loopback-host';
import { formatZodError } from '../../contract/zod-error';

const Registration = z
  .object({
    pid: z.number().int().positive(),
    pod: z.string().min(1).max(253),
    namespace: z.string().min(1).max(253).optional(),
    node: z.string().min(1).max(253).optional(),
    service: z.string().min(1).max(253).optional(),
    /** Workload labels, as the pod would carry them; only the configured ones (HOPSCOPE_BPF_POD_LABELS) are kept. */
    labels: z
      .record(z.string().min(1).max(316), z.string().max(63))
      .refine((l) => Object.keys(l).length <= 32, 'at most 32 labels')
      .optional(),
  })
  .strict();

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

type AppConfig = Pick<ExporterConfig, 'maxRangeMs' | 'maxEventsPerQuery' | 'token' | 'podLabels'>;

/** Bearer-token check in constant time; a missing or wrong token is a 401 that says which. */
function requireToken(token: string | undefined): express.RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const want = Buffer.from(token);
  return (req, res, next) => {
    const m = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) {
      res.set('www-authenticate', 'Bearer realm="hopscope-bpf-exporter"');
      return fail(res, 401, 'unauthorized', 'this endpoint needs Authorization: Bearer <HOPSCOPE_BPF_TOKEN>');
    }
    const got = Buffer.from(m[1]);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return fail(res, 401, 'unauthorized', 'wrong token');
    next();
  };
}

/** Resume position of a stream: ?after= wins over the Last-Event-ID header an EventSource sends on reconnect. */
function resumeFrom(req: Request, after: number | undefined): number | undefined | { error: string } {
  if (after !== undefined) return after;
  const h = req.headers['last-event-id'];
  if (h === undefined || h === '') return undefined;
  if (typeof h !== 'string' || !/^\d{1,16}$/.test(h))
    return { error: 'Last-Event-ID must be an event sequence number' };
  return Number(h);
}

export function createApp(pipeline: Pipeline, cfg: AppConfig): express.Express {
  const app = express();
  app.disable('x-powered-by');
  const auth = requireToken(cfg.token);
  const keepLabels = new Set(cfg.podLabels);
  // Without a token the exporter binds loopback only: a rebound name (DNS rebinding) must not reach it either.
  if (!cfg.token)
    app.use(loopbackHostGuard('the exporter without HOPSCOPE_BPF_TOKEN', 'set a token to serve other names'));

  app.get('/health', (_req, res) => {
    res.json(pipeline.health());
  });

  app.get('/metrics', async (_req, res) => {
    res.set('content-type', pipeline.registry.contentType);
    res.send(await pipeline.registry.metrics());
  });

  app.get('/events', auth, (req, res) => {
    const q = parseEventQuery(req.query, { maxRangeMs: cfg.maxRangeMs, maxLimit: cfg.maxEventsPerQuery });
    if ('error' in q) return fail(res, 400, 'bad_request', q.error);
    const ring = pipeline.ring;
    const seq = { first: ring.firstSeq, last: ring.lastSeq };
    const base = { dropped: ring.evicted, suppressed: pipeline.suppressedIn(q.filter), mode: pipeline.mode };
    if (q.after !== undefined) {
      // Paging forward from a sequence number: the oldest matching events first, `resumeAfter` for the next page.
      const { events, truncated, gap, resumeAfter } = ring.since(q.after, q.filter, q.limit);
      return res.json({ events, ...base, truncated, seq, resumeAfter, ...(gap ? { gap } : {}) });
    }
    const { events, truncated } = ring.query(q.filter, q.limit);
    // suppressed: events of this window (types, pod, pid) over the per-event budget, counted in /metrics but not here.
    res.json({ events, ...base, truncated, seq });
  });

  app.get('/events/stream', auth, (req, res) => {
    const q = parseEventQuery(req.query, { maxRangeMs: cfg.maxRangeMs, maxLimit: cfg.maxEventsPerQuery }, true);
    if ('error' in q) return fail(res, 400, 'bad_request', q.error);
    const after = resumeFrom(req, q.after);
    if (typeof after === 'object') return fail(res, 400, 'bad_request', after.error);
    if (pipeline.sse.full) {
      pipeline.sse.refused++;
      res.set('retry-after', '5');
      return fail(
        res,
        503,
        'too_many_subscribers',
        `${pipeline.sse.maxClients} stream subscribers already (HOPSCOPE_BPF_SSE_MAX_CLIENTS); retry later or poll /events?after=`
      );
    }
    pipeline.sse.add(res, q.filter, after, { mode: pipeline.mode, node: pipeline.node, filter: q.filter });
  });

  const json = express.json({ limit: '16kb' });

  app.get('/register', auth, (_req, res) => {
    res.json({ registrations: pipeline.pids.list() });
  });

  app.post('/register', auth, json, (req, res) => {
    const r = Registration.safeParse(req.body);
    if (!r.success) return fail(res, 400, 'bad_request', formatZodError(r.error, { root: 'body' }));
    const labels = r.data.labels
      ? Object.fromEntries(Object.entries(r.data.labels).filter(([k]) => keepLabels.has(k)))
      : undefined;
    const reg = pipeline.pids.set({ ...r.data, labels: labels && Object.keys(labels).length ? labels : undefined });
    pipeline.attributor.forget(r.data.pid);
    // The process may run files the uprobes should be on (a libcuda): look at its maps now.
    pipeline.files.scanSoon();
    res.status(201).json(reg);
  });

  app.delete('/register/:pid', auth, (req, res) => {
    const pid = String(req.params.pid);
    if (!/^\d+$/.test(pid)) return fail(res, 400, 'bad_request', 'pid must be a positive integer');
    if (!pipeline.pids.delete(Number(pid))) return fail(res, 404, 'not_found', `pid ${pid} is not registered`);
    pipeline.attributor.forget(Number(pid));
    res.status(204).end();
  });

  app.use((_req, res) =>
    fail(res, 404, 'not_found', 'no such route; see /health, /metrics, /events, /events/stream, /register')
  );
  app.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 500;
    fail(res, status, status === 500 ? 'internal' : 'bad_request', err.message);
  });
  return app;
}

/** The Kubernetes API connection the config asks for, or why there is none. */
function kubernetesOf(cfg: ExporterConfig, log: Logger): { connection?: KubeConnection; error?: string } | undefined {
  const k = cfg.kubernetes;
  if (k.mode === 'off') return undefined;
  try {
    return {
      connection: k.mode === 'kubeconfig' ? kubeconfigConnection(k.kubeconfig!) : inClusterConnection(process.env),
    };
  } catch (err) {
    log.error({ err: (err as Error).message }, 'kubernetes connection unusable; pods attributed from /proc only');
    return { error: (err as Error).message };
  }
}

/** Builds the pipeline from config, starts probes (or the replay) and the HTTP server. */
export async function startExporter(
  cfg: ExporterConfig,
  log: Logger = pino({ level: cfg.logLevel })
): Promise<Exporter> {
  const pipeline = new Pipeline({
    probes: ALL_PROBES.filter((p) => cfg.probes.includes(p.name)),
    probeOptions: { traceparentSampleEvery: cfg.traceparentSampleEvery, selfPid: process.pid },
    bpftrace: cfg.bpftrace,
    node: cfg.node,
    ringSize: cfg.ringSize,
    replay: cfg.replayFile ? { file: cfg.replayFile, timing: cfg.replayTiming } : undefined,
    recordFile: cfg.recordFile,
    perfPages: cfg.perfPages,
    batchPauseMs: cfg.batchPauseMs,
    kit: { budget: cfg.eventBudget, flushMs: cfg.flushMs },
    podLabels: cfg.podLabels,
    kubernetes: kubernetesOf(cfg, log),
    uprobeFiles: cfg.uprobeFiles,
    scanMs: cfg.scanMs,
    sseMaxClients: cfg.sseMaxClients,
    log,
  });
  const app = createApp(pipeline, cfg);
  // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check often enough to honour them.
  const server = createServer(
    {
      headersTimeout: cfg.headersTimeoutMs,
      requestTimeout: cfg.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.floor(cfg.headersTimeoutMs / 2)),
    },
    app
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  await pipeline.start();
  const url = `http://${cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host}:${port}`;
  log.info(
    {
      url,
      mode: pipeline.mode,
      probes: cfg.probes,
      token: Boolean(cfg.token),
      attribution: pipeline.pods ? 'kubernetes' : 'proc',
    },
    'bpf-exporter listening'
  );
  return {
    pipeline,
    server,
    url,
    port,
    async stop() {
      await pipeline.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
