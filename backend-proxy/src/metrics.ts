/** The proxy's own metrics (`hopscope_proxy_*`), served at GET /metrics. */
import client from 'prom-client';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'hopscope_proxy_' });

export const httpRequests = new client.Counter({
  name: 'hopscope_proxy_http_requests_total',
  help: 'API requests by route and status',
  labelNames: ['method', 'route', 'status'],
  registers: [registry],
});
export const httpDuration = new client.Histogram({
  name: 'hopscope_proxy_http_request_duration_seconds',
  help: 'API request duration',
  labelNames: ['route'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
export const sourceCalls = new client.Counter({
  name: 'hopscope_proxy_source_calls_total',
  help: 'Calls to data sources by outcome',
  labelNames: ['source', 'outcome'],
  registers: [registry],
});
export const sourceLatency = new client.Histogram({
  name: 'hopscope_proxy_source_call_duration_seconds',
  help: 'Latency of calls to data sources',
  labelNames: ['source'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
export const storeSpans = new client.Gauge({
  name: 'hopscope_proxy_store_spans',
  help: 'Spans held by the embedded store',
  registers: [registry],
});
export const storeTraces = new client.Gauge({
  name: 'hopscope_proxy_store_traces',
  help: 'Traces held by the embedded store',
  registers: [registry],
});
export const storeEvictions = new client.Counter({
  name: 'hopscope_proxy_store_evicted_spans_total',
  help: 'Spans evicted from the embedded store',
  labelNames: ['reason'],
  registers: [registry],
});
export const otlpReceived = new client.Counter({
  name: 'hopscope_proxy_otlp_received_spans_total',
  help: 'Spans received at POST /v1/traces',
  labelNames: ['encoding'],
  registers: [registry],
});
export const otlpRejected = new client.Counter({
  name: 'hopscope_proxy_otlp_rejected_requests_total',
  help: 'OTLP requests rejected (malformed)',
  labelNames: ['encoding'],
  registers: [registry],
});
export const rcaDuration = new client.Histogram({
  name: 'hopscope_proxy_rca_duration_seconds',
  help: 'Root-cause engine run time',
  labelNames: ['kind'],
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  registers: [registry],
});
export const rcaPoolQueued = new client.Gauge({
  name: 'hopscope_proxy_rca_queued',
  help: "Root-cause jobs waiting for one of the engine's worker threads",
  registers: [registry],
});
export const rcaPoolRefused = new client.Counter({
  name: 'hopscope_proxy_rca_refused_total',
  help: "Root-cause requests answered 503 because the engine's queue was full",
  registers: [registry],
});
export const alertsFiring = new client.Gauge({
  name: 'hopscope_proxy_alerts_firing',
  help: 'Composite alerts currently firing',
  registers: [registry],
});
export const uncaughtErrors = new client.Counter({
  name: 'hopscope_proxy_uncaught_errors_total',
  help: 'Unhandled promise rejections and uncaught exceptions (timer callbacks…), logged and survived',
  labelNames: ['kind'],
  registers: [registry],
});
