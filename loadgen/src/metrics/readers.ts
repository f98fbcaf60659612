/**
 * Where the client metrics go, by the standard paths only:
 * - `otlp`: OTLP/HTTP (JSON) to `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/metrics`),
 *   headers from `OTEL_EXPORTER_OTLP_HEADERS`, every `OTEL_METRIC_EXPORT_INTERVAL` ms (default 5000), flushed at the end;
 * - `prometheus`: the OTel Prometheus exporter as a scrape target on `--metrics-host:--metrics-port` (`/metrics`),
 *   whose URL the run registration carries (the proxy serves it as HTTP service discovery); at the end we wait, within a
 *   bound, for one scrape after the last update, so Prometheus has the final counts.
 * The resource: `service.name` (OTEL_SERVICE_NAME, default hopscope-load), `service.instance.id` (the worker id),
 * and OTEL_RESOURCE_ATTRIBUTES.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { ClientInstruments, SCOPE } from './client-metrics';

export type MetricsMode = 'none' | 'otlp' | 'prometheus';

export interface MetricsSetup {
  mode: MetricsMode;
  runId: string;
  scenario: string;
  workerId: string;
  /** Scrape target bind address and port (0 = any free port). */
  host: string;
  port: number;
  /** Longest wait at the end for a scrape after the last update. */
  waitMaxMs: number;
  /** Whether someone is expected to scrape (the run is registered with the proxy, or a port was asked for). */
  expectScrape: () => boolean;
  env?: NodeJS.ProcessEnv;
  warn?: (msg: string) => void;
}

export interface ClientMetrics {
  mode: MetricsMode;
  instruments?: ClientInstruments;
  /** The scrape target (prometheus mode). */
  url?: string;
  /** Where OTLP goes (otlp mode). */
  endpoint?: string;
  /** Gets the final values out (flush, or a scrape after the last update); returns a note for the summary, if any. */
  finish(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** `--metrics` as given, else OTLP when an OTLP endpoint is configured, else a Prometheus scrape target. */
export function chooseMetricsMode(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): MetricsMode {
  if (flag !== undefined) return flag as MetricsMode;
  return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp' : 'prometheus';
}

export function otlpMetricsEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/metrics`;
  return undefined;
}

function resource(workerId: string, env: NodeJS.ProcessEnv) {
  // envDetector reads process.env; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over our defaults.
  const base = resourceFromAttributes({ 'service.name': 'hopscope-load', 'service.instance.id': workerId });
  return env === process.env ? base.merge(detectResources({ detectors: [envDetector] })) : base;
}

/** Says once when exports fail (the SDK itself only logs through a silent diag logger). */
class WarnOnFailure implements PushMetricExporter {
  private warned = false;
  constructor(
    private readonly inner: PushMetricExporter,
    private readonly where: string,
    private readonly warn: (m: string) => void
  ) {}
  export(metrics: ResourceMetrics, done: (r: ExportResult) => void): void {
    this.inner.export(metrics, (r) => {
      if (r.code !== ExportResultCode.SUCCESS && !this.warned) {
        this.warned = true;
        this.warn(
          `client metrics could not be exported to ${this.where}: ${r.error?.message ?? 'failed'} (the run goes on)`
        );
      }
      done(r);
    });
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  selectAggregationTemporality(t: InstrumentType): AggregationTemporality {
    return this.inner.selectAggregationTemporality?.(t) ?? AggregationTemporality.CUMULATIVE;
  }
}

export async function startClientMetrics(s: MetricsSetup): Promise<ClientMetrics> {
  const env = s.env ?? process.env;
  const warn = s.warn ?? (() => {});
  if (s.mode === 'none') return { mode: 'none', finish: async () => undefined, close: async () => {} };
  const labels = { runId: s.runId, scenario: s.scenario };

  if (s.mode === 'otlp') {
    const endpoint = otlpMetricsEndpoint(env);
    if (!endpoint)
      throw new Error('--metrics otlp needs OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
    const protocol = env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
    if (protocol && protocol !== 'http/json')
      warn(
        `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: the load generator sends OTLP/HTTP JSON (http/json) to ${endpoint}`
      );
    const intervalMs = Math.max(100, Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 5000) || 5000);
    const exporter = new WarnOnFailure(new OTLPMetricExporter({ url: endpoint }), endpoint, warn);
    const instruments = new ClientInstruments(labels);
    const provider = new MeterProvider({
      resource: resource(s.workerId, env),
      readers: [
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: intervalMs,
          exportTimeoutMillis: Math.min(intervalMs, 10_000),
          metricProducers: [instruments],
        }),
      ],
    });
    instruments.observe(provider.getMeter(SCOPE.name, SCOPE.version));
    let closed = false;
    return {
      mode: 'otlp',
      instruments,
      endpoint,
      finish: async () => {
        await provider.forceFlush().catch(() => {});
        return undefined;
      },
      close: async () => {
        if (!closed) {
          closed = true;
          await provider.shutdown().catch(() => {});
        }
      },
    };
  }

  const instruments = new ClientInstruments(labels);
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [instruments] });
  const provider = new MeterProvider({ resource: resource(s.workerId, env), readers: [exporter] });
  instruments.observe(provider.getMeter(SCOPE.name, SCOPE.version));
  const scrapes: number[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      scrapes.push(performance.now());
      if (scrapes.length > 20) scrapes.shift();
      exporter.getMetricsRequestHandler(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'the client metrics are at /metrics' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `--metrics-port ${s.port}: the port is in use`
            : `cannot serve client metrics on ${s.host}:${s.port}: ${err.message}`
        )
      )
    );
    server.listen(s.port, s.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const advertised =
    s.host === '0.0.0.0' || s.host === '::' ? hostname() : s.host.includes(':') ? `[${s.host}]` : s.host;
  const url = `http://${advertised}:${port}/metrics`;
  let closed = false;
  return {
    mode: 'prometheus',
    instruments,
    url,
    finish: async () => {
      const since = Math.max(instruments.lastUpdate, performance.now() - 1);
      const gaps = scrapes
        .slice(1)
        .map((t, i) => t - scrapes[i])
        .sort((a, b) => a - b);
      // The bound: 2.5 scrape intervals when we have seen them, else the longest wait if a scraper is expected.
      const bound = gaps.length
        ? Math.min(s.waitMaxMs, 2.5 * gaps[Math.floor(gaps.length / 2)])
        : s.expectScrape() || scrapes.length
          ? s.waitMaxMs
          : 0;
      const t0 = performance.now();
      while (!(scrapes.length && scrapes[scrapes.length - 1] > since) && performance.now() - t0 < bound)
        await new Promise((r) => setTimeout(r, 50));
      if (scrapes.length && scrapes[scrapes.length - 1] > since) return undefined;
      if (bound === 0) return undefined;
      return `no scrape of ${url} after the last update within ${(bound / 1000).toFixed(1)} s: Prometheus may lack the run's last seconds`;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await provider.shutdown().catch(() => {});
    },
  };
}
