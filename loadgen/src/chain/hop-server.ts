/**
 * The HTTP server every hop replica runs: plain HTTP (and, for TLS hops, a second HTTPS listener whose handshake the
 * `tls_slow_handshake` fault slows in SNICallback), W3C context extraction, one SERVER span per request answered with
 * a `traceresponse` header, the faults that act inside a hop (latency, error, timeout, cpu_hog), `/metrics` (OpenMetrics
 * with trace exemplars when the scrape asks for it) and `/healthz`.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ChainConfig } from '../config';
import { observeWithExemplar, traceExemplar } from '../telemetry/exemplars';
import { renderMetrics } from '../telemetry/metrics-format';
import type { CpuBurner } from './faults/cpu-burn';
import type { FaultRegistry } from './faults/registry';
import type { CudaStandIn } from './gpu/cuda-stand-in';
import type { HopClient } from './client';
import type { Replica } from './topology';
import { HopError } from './errors';
import { readJsonBody } from './read-body';
import { chainCert, tlsServerName } from './tls';
import { errorBody } from '../shared/errors';
import { sleep } from './util';

export interface HopEnv {
  cfg: ChainConfig;
  replica: Replica;
  tracer: Tracer;
  registry: Registry;
  faults: FaultRegistry;
  log: Logger;
  client: HopClient;
  rand: () => number;
  burner: CpuBurner;
  /** Simulated milliseconds → real milliseconds (× timeScale). */
  scale: (ms: number) => number;
  /** Called when an injected `error` fault fails a request before the hop's handler runs, so a hop that keeps its own
   *  server metrics (the LLM servers' failure counters) counts it as the real server would. */
  onInjectedError?: (body: unknown) => void;
  /** false: /metrics only in the Prometheus text format (a hop imitating an exporter that cannot speak OpenMetrics). */
  openMetrics?: boolean;
  /** The stand-in CUDA driver the LLM replicas allocate through (absent: GPU OOM without the kernel signal). */
  cudaStandIn?: CudaStandIn;
}

export interface HopRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
  raw: IncomingMessage;
}

export type Handler = (req: HopRequest, res: ServerResponse, span: Span) => Promise<void>;
/** Keyed by "METHOD /path". */
export type Routes = Record<string, Handler>;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, errorBody(code, message));
}

export interface HopServer {
  url: string;
  /** Present for TLS hops: `https://127.0.0.1:<port>` (clients must send SNI `<hop>.hopscope.local`). */
  tlsUrl?: string;
  port: number;
  close(): Promise<void>;
}

function listen(server: http.Server | https.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startHopServer(env: HopEnv, routes: Routes, port: number, tlsPortWanted = 0): Promise<HopServer> {
  const { replica, registry, faults, tracer } = env;
  const requests = new Counter({
    name: 'hopscope_requests_total',
    help: 'Requests served by this hop, by route and HTTP status code.',
    labelNames: ['route', 'code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'hopscope_request_duration_seconds',
    help: 'Time this hop took to answer (including its downstream calls), by route.',
    labelNames: ['route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
    enableExemplars: true,
  });
  const inflight = new Gauge({
    name: 'hopscope_requests_in_flight',
    help: 'Requests this hop is working on now.',
    registers: [registry],
  });
  new Gauge({
    name: 'hopscope_fault_active',
    help: 'Faults active on this hop replica (1 per kind).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const f of faults.activeOn(replica.hop, replica.pod)) this.set({ kind: f.kind }, 1);
    },
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/metrics') {
      try {
        const out = await renderMetrics(registry, req.headers.accept, { openMetrics: env.openMetrics ?? true });
        res.writeHead(200, { 'content-type': out.contentType });
        res.end(out.body);
      } catch (err) {
        sendError(res, 500, 'metrics_failed', (err as Error).message);
      }
      return;
    }
    if (method === 'GET' && url.pathname === '/healthz') {
      sendJson(res, 200, { ok: true, service: replica.hop, pod: replica.pod });
      return;
    }
    const key = `${method} ${url.pathname}`;
    const handler: Handler | undefined = Object.hasOwn(routes, key) ? routes[key] : undefined;
    const route = handler ? url.pathname : 'unknown';
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      `${method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': url.pathname,
          'http.route': route,
          'server.address': env.cfg.host,
          'server.port': req.socket.localPort ?? 0,
          'network.protocol.name': 'http',
          ...(req.socket instanceof tls.TLSSocket
            ? { 'url.scheme': 'https', 'tls.protocol.version': req.socket.getProtocol() ?? '' }
            : { 'url.scheme': 'http' }),
        },
      },
      parent
    );
    // W3C Trace Context Level 2: every answer names its trace and this server span, errors and streams included
    // (set before any handler writes its head, so it goes out with the first byte).
    const sc = span.spanContext();
    if (isSpanContextValid(sc))
      res.setHeader(
        'traceresponse',
        `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`
      );
    const bag = propagation.getBaggage(parent);
    for (const name of ['hopscope.run_id', 'hopscope.scenario']) {
      const v = bag?.getEntry(name)?.value;
      if (v) span.setAttribute(name, v);
    }
    if (bag?.getEntry('hopscope.load_test'))
      span.setAttribute('hopscope.load_test', bag.getEntry('hopscope.load_test')!.value === 'true');
    const t0 = performance.now();
    inflight.inc();
    let finished = false;
    let failed = false;
    const finish = (code: number): void => {
      if (finished) return;
      finished = true;
      inflight.dec();
      requests.inc({ route, code: String(code) });
      observeWithExemplar(
        duration,
        { route },
        (performance.now() - t0) / 1000,
        traceExemplar(span, failed || code >= 500)
      );
      span.setAttribute('http.response.status_code', code);
      if (code >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${code}` });
      span.end();
    };
    await context.with(trace.setSpan(parent, span), async () => {
      try {
        if (!handler) throw new HopError(404, 'not_found', `no route ${key} on ${replica.hop}`);
        const body = method === 'GET' ? undefined : await readJsonBody(req);
        await applyInHopFaults(env, span, req, res, body);
        if (res.writableEnded || res.destroyed) return;
        await handler(
          { method, path: url.pathname, query: url.searchParams, headers: req.headers, body, raw: req },
          res,
          span
        );
      } catch (err) {
        const e = err instanceof HopError ? err : new HopError(500, 'internal', (err as Error).message);
        failed = true;
        span.setAttribute('error.type', e.errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
        if (e.status >= 500) span.recordException(e);
        // A 413 leaves the rest of the body unread: close the connection rather than drain it.
        if (e.status === 413) res.setHeader('connection', 'close');
        if (!res.headersSent) sendError(res, e.status, e.code, e.message);
        else res.end();
      } finally {
        if (res.writableEnded || res.destroyed) finish(res.statusCode);
        else res.once('close', () => finish(res.statusCode));
      }
    });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err) => {
      env.log.error({ err }, 'unhandled hop error');
      if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
    });
  };

  const server = http.createServer({ keepAliveTimeout: 30_000 }, onRequest);
  const boundPort = await listen(server, env.cfg.host, port);
  let tlsServer: https.Server | undefined;
  let tlsPort: number | undefined;
  if (env.cfg.tlsHops.includes(replica.hop)) {
    const { key, cert } = chainCert();
    const secure = tls.createSecureContext({ key, cert });
    tlsServer = https.createServer(
      {
        key,
        cert,
        keepAliveTimeout: 30_000,
        // The handshake pauses here before the server's certificate is sent: a real, kernel-visible slow handshake.
        SNICallback: (servername, cb) => {
          const f = faults.active(replica.hop, replica.pod, 'tls_slow_handshake');
          if (f && servername === tlsServerName(replica.hop)) setTimeout(() => cb(null, secure), f.magnitude);
          else cb(null, secure);
        },
      },
      onRequest
    );
    tlsPort = await listen(tlsServer, env.cfg.host, tlsPortWanted);
  }
  const url = `http://${env.cfg.host}:${boundPort}`;
  return {
    url,
    tlsUrl: tlsPort ? `https://${env.cfg.host}:${tlsPort}` : undefined,
    port: boundPort,
    close: async () => {
      const closeOne = (s: http.Server | https.Server): Promise<void> =>
        new Promise((r) => {
          s.close(() => r());
          s.closeAllConnections();
        });
      await Promise.all([closeOne(server), ...(tlsServer ? [closeOne(tlsServer)] : [])]);
    },
  };
}

/** Faults that act inside the hop, before its own work: timeout, error, latency, cpu_hog. */
async function applyInHopFaults(
  env: HopEnv,
  span: Span,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown
): Promise<void> {
  const { faults, replica } = env;
  const on = (kind: Parameters<FaultRegistry['active']>[2]) => faults.active(replica.hop, replica.pod, kind);
  const timeout = on('timeout');
  if (timeout && env.rand() < timeout.magnitude) {
    span.setAttribute('hopscope.fault.kind', 'timeout');
    span.setAttribute('hopscope.fault.id', timeout.id);
    span.addEvent('fault.timeout', { 'hopscope.fault.id': timeout.id });
    // Hang until the caller gives up (its timeout), capped so a forgotten socket cannot leak.
    await new Promise<void>((resolve) => {
      const cap = setTimeout(resolve, env.cfg.hopTimeoutMs + 2000);
      res.once('close', () => {
        clearTimeout(cap);
        resolve();
      });
      req.socket.once('close', () => {
        clearTimeout(cap);
        resolve();
      });
    });
    throw new HopError(504, 'timeout', 'injected timeout: the caller gave up', 'timeout');
  }
  const error = on('error');
  if (error && env.rand() < error.magnitude) {
    span.setAttribute('hopscope.fault.kind', 'error');
    span.setAttribute('hopscope.fault.id', error.id);
    env.onInjectedError?.(body);
    throw new HopError(500, 'injected_error', `injected error (fault ${error.id})`, 'injected_error');
  }
  const latency = on('latency');
  if (latency) {
    span.setAttribute('hopscope.fault.kind', 'latency');
    span.setAttribute('hopscope.fault.id', latency.id);
    await sleep(latency.magnitude);
  }
  const hog = on('cpu_hog');
  if (hog) {
    span.setAttribute('hopscope.fault.kind', 'cpu_hog');
    span.setAttribute('hopscope.fault.id', hog.id);
    await env.burner.burn(hog.magnitude);
  }
}
