/**
 * The proxy's own traces, configured by the standard OpenTelemetry variables (HOPSCOPE_PROXY_OTLP_URL is the
 * fallback), recorded by the OpenTelemetry instrumentations: `@opentelemetry/instrumentation-http` gives every request
 * the proxy serves a SERVER span, a child of the caller's W3C `traceparent` (Grafana's data proxy sends one), so a
 * Grafana trace continues into the proxy; `-express` names it by its route (`GET /api/golden`) and times the route's
 * handler; `-undici` gives each HTTP attempt of a source call (sources/http.ts, itself a span) a CLIENT span and sends
 * its context on to Prometheus, Tempo, the exporters and Alertmanager. Root-cause runs have their own spans. With no
 * endpoint nothing is installed: the API stays a no-op (zero cost).
 *
 * - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else
 *   `HOPSCOPE_PROXY_OTLP_URL` (as is);
 * - `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`: `http/protobuf` (the default) or `http/json`;
 * - `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`: `key=value,…`, values URL-encoded (e.g. an API key);
 * - `OTEL_SERVICE_NAME` (default `hopscope-proxy`), `OTEL_RESOURCE_ATTRIBUTES` (`k8s.pod.name=…,…`);
 * - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: off; `OTEL_TRACES_SAMPLER[_ARG]`: read by the SDK.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations, type InstrumentationBase } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { createRequire } from 'node:module';
import { parseOtelList } from '../../contract/otel-env';
import { ConfigError } from './config';
import { SOURCE_CALL } from './sources/http';

export interface SelfTracingConfig {
  /** The OTLP/HTTP traces URL; undefined = off. */
  endpoint?: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  serviceName: string;
  resource: Record<string, string>;
  /** Which variable named the endpoint (for the start log line). */
  from?: string;
}

/** Variables read here, for --help. */
export const OTEL_HELP: Record<string, string> = {
  OTEL_EXPORTER_OTLP_ENDPOINT:
    "OTLP/HTTP base URL for the proxy's own spans (+ /v1/traces), e.g. http://otel-collector:4318",
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'full OTLP/HTTP traces URL (wins over OTEL_EXPORTER_OTLP_ENDPOINT)',
  OTEL_EXPORTER_OTLP_HEADERS:
    'headers sent with every export: key1=value1,key2=value2 (URL-encoded values); _TRACES_HEADERS too',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf (default) or http/json; _TRACES_PROTOCOL too',
  OTEL_SERVICE_NAME: "service.name of the proxy's spans (default hopscope-proxy)",
  OTEL_RESOURCE_ATTRIBUTES:
    "resource attributes of the proxy's spans: key1=value1,... (e.g. k8s.pod.name, deployment.environment)",
  OTEL_SDK_DISABLED: 'true: no spans exported (as OTEL_TRACES_EXPORTER=none)',
  HOPSCOPE_PROXY_OTLP_URL: 'fallback OTLP/HTTP traces URL when no OTEL_EXPORTER_OTLP_* endpoint is set (unset = off)',
};

const first = (env: NodeJS.ProcessEnv, ...names: string[]): [string, string] | undefined => {
  for (const n of names) if (env[n] !== undefined && env[n]!.trim() !== '') return [n, env[n]!.trim()];
  return undefined;
};

function httpUrl(name: string, raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a URL (expected e.g. http://127.0.0.1:4318)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ConfigError(`${name}: "${raw}" must be an http(s) URL (the proxy exports over OTLP/HTTP)`);
  return raw;
}

const configError = (m: string): Error => new ConfigError(m);

/** The proxy's tracing settings from the environment; throws ConfigError naming the variable. */
export function selfTracingFromEnv(env: NodeJS.ProcessEnv = process.env): SelfTracingConfig {
  const resource = env.OTEL_RESOURCE_ATTRIBUTES
    ? parseOtelList('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES, configError)
    : {};
  const headers = {
    ...(env.OTEL_EXPORTER_OTLP_HEADERS
      ? parseOtelList('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS, configError)
      : {}),
    ...(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
      ? parseOtelList('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, configError)
      : {}),
  };
  const proto = first(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (proto && proto[1] !== 'http/protobuf' && proto[1] !== 'http/json')
    throw new ConfigError(`${proto[0]}=${proto[1]}: the proxy exports over OTLP/HTTP; use http/protobuf or http/json`);
  const exporter = first(env, 'OTEL_TRACES_EXPORTER');
  if (exporter && exporter[1] !== 'otlp' && exporter[1] !== 'none')
    throw new ConfigError(`OTEL_TRACES_EXPORTER=${exporter[1]}: the proxy exports traces with otlp (or none)`);
  const off = /^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '') || exporter?.[1] === 'none';
  const c: SelfTracingConfig = {
    protocol: (proto?.[1] as SelfTracingConfig['protocol']) ?? 'http/protobuf',
    headers,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || 'hopscope-proxy',
    resource,
  };
  if (off) return c;
  const traces = first(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = first(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const fallback = first(env, 'HOPSCOPE_PROXY_OTLP_URL');
  if (traces) {
    c.endpoint = httpUrl(traces[0], traces[1]);
    c.from = traces[0];
  } else if (base) {
    c.endpoint = `${httpUrl(base[0], base[1]).replace(/\/+$/, '')}/v1/traces`;
    c.from = base[0];
  } else if (fallback) {
    c.endpoint = httpUrl(fallback[0], fallback[1]);
    c.from = fallback[0];
    // The old variable named an OTLP/HTTP JSON receiver (the proxy's own /v1/traces takes both); keep its encoding.
    if (!proto) c.protocol = 'http/json';
  }
  return c;
}

let installed = false;

/** Scrapes are noise; spans about receiving spans would feed themselves when the proxy exports to itself. */
const UNTRACED = /^\/(metrics|v1\/traces)\/?(?:[?#]|$)/;

/**
 * The three instrumentations, enabled. They patch modules as they are required; the proxy imports express and
 * node:http as ES modules (and the Docker image bundles them), which no require hook sees, so each one's own patch is
 * also applied to the module objects in use (what the OpenTelemetry bundler plugins do): the result is the same
 * whether tracing starts before or after they were imported, as long as it starts before the app is built.
 */
function instrument(): void {
  const http = new HttpInstrumentation({
    ignoreIncomingRequestHook: (req) => UNTRACED.test(req.url ?? ''),
    // Source calls go through undici; the proxy's other outgoing HTTP is its own OTLP export.
    disableOutgoingRequestInstrumentation: true,
  });
  // Route names and the handler's own time; a span per middleware would be noise.
  const web = new ExpressInstrumentation({
    ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
    // Express 5's layers have no path of their own, so the default name would be a bare "request handler".
    spanNameHook: (info, name) =>
      info.layerType === ExpressLayerType.REQUEST_HANDLER && info.route ? `request handler - ${info.route}` : name,
  });
  const undici = new UndiciInstrumentation({
    // Only the proxy's source calls (sources/http.ts), not whatever else in the process uses fetch.
    ignoreRequestHook: () => context.active().getValue(SOURCE_CALL) === undefined,
    requestHook: (span) => {
      span.setAttribute('hopscope.source', String(context.active().getValue(SOURCE_CALL)));
    },
  });
  registerInstrumentations({ instrumentations: [http, web, undici] });
  const require = createRequire(import.meta.url);
  patchInUse(http, 'http', require('node:http'));
  patchInUse(web, 'express', express);
}

function patchInUse(instrumentation: InstrumentationBase, name: string, exports: unknown): void {
  for (const def of instrumentation.getModuleDefinitions()) if (def.name === name) def.patch?.(exports);
}

/**
 * Starts exporting the proxy's spans as configured; returns the shutdown (flushes). `extraProcessors`: tests read
 * the spans in memory. Installs the W3C propagators (traceparent, baggage), the async context manager so a
 * request's context follows it across awaits, and the instrumentations (once per process; call it before the proxy
 * starts). A string is an endpoint (the old signature).
 */
export function startSelfTracing(
  c: SelfTracingConfig | string | undefined,
  extraProcessors: SpanProcessor[] = []
): () => Promise<void> {
  const cfg: SelfTracingConfig | undefined =
    typeof c === 'string'
      ? { endpoint: c, protocol: 'http/json', headers: {}, serviceName: 'hopscope-proxy', resource: {} }
      : c;
  if (!cfg?.endpoint && !extraProcessors.length) return async () => {};
  const processors: SpanProcessor[] = [...extraProcessors];
  if (cfg?.endpoint) {
    const Exporter = cfg.protocol === 'http/json' ? OTLPJsonExporter : OTLPProtoExporter;
    processors.push(
      new BatchSpanProcessor(new Exporter({ url: cfg.endpoint, headers: cfg.headers, timeoutMillis: 5000 }))
    );
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.namespace': 'hopscope',
      ...cfg?.resource,
      'service.name': cfg?.serviceName ?? 'hopscope-proxy',
    }),
    spanProcessors: processors,
  });
  if (!installed) {
    installed = true;
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })
    );
    instrument();
  }
  trace.setGlobalTracerProvider(provider);
  return () => provider.shutdown();
}
