import { z } from 'zod';
import { SourceStatus } from './common';
import { FaultAnnotation } from './faults';
import { KernelEvent, KernelEventType } from './kernel-events';
import { RcaAnswer } from './rca';

/** A time series point: [epoch ms, value or null = no data]. */
export const Point = z.tuple([z.number(), z.number().nullable()]);
export type Point = z.infer<typeof Point>;

export const InferenceBackend = z.enum(['vllm', 'tgi', 'sglang']);
export type InferenceBackend = z.infer<typeof InferenceBackend>;

export const GoldenMetric = z.enum([
  'rps',
  'output_tokens_per_s',
  'e2e_p99_s',
  'ttft_p99_s',
  'kv_cache_hit_rate',
  'error_rate',
]);
export type GoldenMetric = z.infer<typeof GoldenMetric>;

/** One golden series. `origin` says where the numbers come from: server metrics (Prometheus) or OTel/client spans. */
export const GoldenSeries = z.object({
  metric: GoldenMetric,
  backend: InferenceBackend,
  labels: z.record(z.string(), z.string()),
  unit: z.string(),
  origin: z.enum(['prometheus', 'otel']),
  query: z.string().optional(),
  /**
   * The metric names the series was read from, as Prometheus had them: the current release's, or an older one's an
   * engine renamed since (e.g. `vllm:gpu_prefix_cache_hits_total` for `vllm:prefix_cache_hits_total`).
   */
  metricNames: z.array(z.string()).optional(),
  note: z.string().optional(),
  points: z.array(Point),
});
export type GoldenSeries = z.infer<typeof GoldenSeries>;

/** GET /api/golden?from&to&step[&service][&backend][&model] */
export const GoldenAnswer = z.object({
  from: z.number(),
  to: z.number(),
  stepMs: z.number().positive(),
  series: z.array(GoldenSeries),
  /** Metrics that have no series, and why (e.g. TGI has no KV-cache hit rate). */
  missing: z.array(z.object({ metric: GoldenMetric, backend: InferenceBackend, reason: z.string() })),
  sources: z.array(SourceStatus),
});
export type GoldenAnswer = z.infer<typeof GoldenAnswer>;

export const DcgmField = z.enum(['DCGM_FI_PROF_SM_ACTIVE', 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'DCGM_FI_DEV_GPU_UTIL']);
export type DcgmField = z.infer<typeof DcgmField>;

/** GET /api/gpu/heatmap?from&to — GPUs (or MIG instances) × time, values 0..1 (null = no data / DCGM blank). */
export const HeatmapAnswer = z.object({
  from: z.number(),
  to: z.number(),
  stepMs: z.number().positive(),
  field: DcgmField.nullable(),
  /** Always "per GPU / MIG instance": no live source gives per-SM figures. */
  granularity: z.literal('gpu'),
  note: z.string().optional(),
  times: z.array(z.number()),
  rows: z.array(
    z.object({
      gpu: z.string(),
      uuid: z.string().optional(),
      mig: z.string().optional(),
      host: z.string().optional(),
      pod: z.string().optional(),
      namespace: z.string().optional(),
      values: z.array(z.number().nullable()),
    })
  ),
  sources: z.array(SourceStatus),
});
export type HeatmapAnswer = z.infer<typeof HeatmapAnswer>;

/**
 * Where a service/pod figure comes from, in order of preference: the services' own counters in Prometheus
 * (`service-metrics`, e.g. `hopscope_requests_total`), Tempo's span metrics (`spanmetrics`), the embedded store's
 * counters kept at ingest for every span received (`ingest-counters`), or a sample of traces (`sampled-traces`).
 */
export const FigureOrigin = z.enum(['service-metrics', 'spanmetrics', 'ingest-counters', 'sampled-traces']);
export type FigureOrigin = z.infer<typeof FigureOrigin>;

/** How one figure was obtained: its origin, whether it is an exact count or an estimate, and why (`note`). */
export const FigureProvenance = z.object({
  origin: FigureOrigin,
  /** true: counted (every request); false: an estimate (scaled sample, interpolated percentile…); `note` says which. */
  exact: z.boolean(),
  note: z.string().optional(),
});
export type FigureProvenance = z.infer<typeof FigureProvenance>;

/** The provenance of each figure of a service or pod row: the rate (`requests`, `rps`), the errors, the percentiles. */
export const FigureSources = z.object({ rate: FigureProvenance, errors: FigureProvenance, latency: FigureProvenance });
export type FigureSources = z.infer<typeof FigureSources>;

export const ServiceSummary = z.object({
  service: z.string(),
  /** Spans of this service the trace source received in the range (kept by sampling: not a request count). */
  spans: z.number().int().nonnegative(),
  /** Failed requests in the range (see `figures.errors`). */
  errors: z.number().int().nonnegative(),
  /** Requests served in the range: server/consumer spans, or all of the service's spans when it has none. */
  requests: z.number().nonnegative(),
  /** Requests per second over the range (see `figures.rate`). */
  rps: z.number().nonnegative(),
  /** errors / requests; null when there were no requests. */
  errorRate: z.number().min(0).max(1).nullable(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  pods: z.array(z.string()),
  figures: FigureSources,
});
export type ServiceSummary = z.infer<typeof ServiceSummary>;

export const ServicesAnswer = z.object({
  from: z.number(),
  to: z.number(),
  services: z.array(ServiceSummary),
  /** Answer-wide caveats (e.g. a window shorter than the rate rule, a sample of traces and its size). */
  notes: z.array(z.string()),
  sources: z.array(SourceStatus),
});
export type ServicesAnswer = z.infer<typeof ServicesAnswer>;

export const PodSummary = z.object({
  pod: z.string(),
  node: z.string().optional(),
  /** Spans of this pod the trace source received in the range. */
  spans: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  requests: z.number().nonnegative(),
  rps: z.number().nonnegative(),
  errorRate: z.number().min(0).max(1).nullable(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  kernelEvents: z.record(z.string(), z.number().int().nonnegative()),
  /** Absent for a pod only the kernel probes saw (no requests recorded anywhere). */
  figures: FigureSources.optional(),
});
export type PodSummary = z.infer<typeof PodSummary>;

export const PodsAnswer = z.object({
  service: z.string(),
  from: z.number(),
  to: z.number(),
  pods: z.array(PodSummary),
  notes: z.array(z.string()),
  sources: z.array(SourceStatus),
});
export type PodsAnswer = z.infer<typeof PodsAnswer>;

export const PodKernelEventsAnswer = z.object({
  pod: z.string(),
  from: z.number(),
  to: z.number(),
  events: z.array(KernelEvent),
  counts: z.record(z.string(), z.number().int().nonnegative()),
  dropped: z.number().int().nonnegative(),
  truncated: z.boolean(),
  sources: z.array(SourceStatus),
});
export type PodKernelEventsAnswer = z.infer<typeof PodKernelEventsAnswer>;

export const AnnotationsAnswer = z.object({ annotations: z.array(FaultAnnotation), sources: z.array(SourceStatus) });
export type AnnotationsAnswer = z.infer<typeof AnnotationsAnswer>;

/** A/B selector: `backend=vllm,model=llama-3-8b` (either part optional). */
export const CompareSide = z.object({
  selector: z.object({
    backend: InferenceBackend.optional(),
    model: z.string().optional(),
    service: z.string().optional(),
  }),
  count: z.number().int().nonnegative(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  ttftP50Ms: z.number().nullable(),
  ttftP99Ms: z.number().nullable(),
  /** Latency histogram on shared bucket edges (for overlay). */
  histogram: z.array(z.number().int().nonnegative()),
  /** Per time bucket P50/P99 (shared `times`). */
  p50Series: z.array(z.number().nullable()),
  p99Series: z.array(z.number().nullable()),
  hotZones: z.array(
    z.object({ startMs: z.number(), endMs: z.number(), ratio: z.number(), p50Ms: z.number(), p99Ms: z.number() })
  ),
  /**
   * What was counted: the inference servers' own server spans only (not the callers' client spans, nor agent runs).
   * `origin` is `sampled-traces` (the spans the trace source kept); `exact` false when those are a sample.
   */
  origin: FigureOrigin,
  exact: z.boolean(),
  note: z.string().optional(),
  /** Requests these spans stand for, scaled by the sampling rates recorded on them (= `count` when nothing was sampled). */
  estimatedRequests: z.number().nonnegative(),
});
export type CompareSide = z.infer<typeof CompareSide>;

export const CompareAnswer = z.object({
  from: z.number(),
  to: z.number(),
  bucketEdgesMs: z.array(z.number()),
  times: z.array(z.number()),
  bucketMs: z.number().positive(),
  a: CompareSide,
  b: CompareSide,
  sources: z.array(SourceStatus),
});
export type CompareAnswer = z.infer<typeof CompareAnswer>;

/** One condition of a composite alert rule. */
export const AlertCondition = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('metric'),
    /** PromQL evaluated as an instant query; compared with `threshold`. */
    expr: z.string().min(1).max(2000),
    op: z.enum(['>', '>=', '<', '<=']),
    threshold: z.number(),
  }),
  z.object({
    kind: z.literal('kernel'),
    type: KernelEventType,
    /** Only events longer than this (e.g. TLS handshakes > 500 ms). */
    minDurationMs: z.number().nonnegative().optional(),
    /** N consecutive matching events on one pod (consecutive among that pod's events of this type). */
    consecutive: z.number().int().positive().optional(),
    /** Or at least N matching events within the rule's window. */
    atLeast: z.number().int().positive().optional(),
    pod: z.string().optional(),
  }),
]);
export type AlertCondition = z.infer<typeof AlertCondition>;

export const AlertRule = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,80}$/),
  name: z.string().min(1).max(200),
  /** All conditions must hold, and their matching instants must fall within `withinMs` of each other (co-occurrence). */
  conditions: z.array(AlertCondition).min(1).max(10),
  withinMs: z.number().positive().max(3600_000).default(5000),
  /** How far back each evaluation looks. */
  lookbackMs: z
    .number()
    .positive()
    .max(24 * 3600_000)
    .default(60_000),
  severity: z.enum(['info', 'warning', 'critical']).default('warning'),
  enabled: z.boolean().default(true),
});
export type AlertRule = z.infer<typeof AlertRule>;
/**
 * The rule set. GET answers it with its `version` (one set shared by every proxy on the database); a PUT sends the
 * rules with `expectedVersion` (the version it edited): another proxy or user saving in between is a 409.
 */
export const AlertRules = z.object({
  rules: z.array(AlertRule),
  version: z.number().int().nonnegative().optional(),
  updatedMs: z.number().nullable().optional(),
  updatedBy: z.string().nullable().optional(),
  expectedVersion: z.number().int().nonnegative().optional(),
  /** Why HOPSCOPE_ALERT_RULES_FILE was not imported at start (the proxy runs without it). */
  notice: z.string().optional(),
});
export type AlertRules = z.infer<typeof AlertRules>;

/** GET /api/alerts/rules/export (and what POST /api/alerts/rules/import and HOPSCOPE_ALERT_RULES_FILE take: `rules`). */
export const AlertRulesExport = z.object({
  format: z.literal('hopscope-alert-rules/v1'),
  version: z.number().int().nonnegative(),
  exportedAt: z.string(),
  rules: z.array(AlertRule),
});
export type AlertRulesExport = z.infer<typeof AlertRulesExport>;

export const Alert = z.object({
  ruleId: z.string(),
  name: z.string(),
  state: z.enum(['firing', 'resolved']),
  severity: z.string(),
  startsAt: z.number(),
  endsAt: z.number().optional(),
  pod: z.string().optional(),
  summary: z.string(),
  /** Drill-down link into the app (relative to the Grafana root). */
  link: z.string(),
});
export type Alert = z.infer<typeof Alert>;

/** One firing or resolved transition of an alert (the history, kept in the database). */
export const AlertTransition = z.object({ id: z.number().int(), atMs: z.number(), alert: Alert });
export type AlertTransition = z.infer<typeof AlertTransition>;

export const AlertsAnswer = z.object({
  alerts: z.array(Alert),
  evaluatedAt: z.number().nullable(),
  sources: z.array(SourceStatus),
  /** Transitions in the asked range (or the last day), newest first. */
  history: z.array(AlertTransition).optional(),
  /** Which proxy evaluates and pushes (the `alerts-evaluator` lease), and whether it is the one answering. */
  evaluator: z.object({ holder: z.string().nullable(), self: z.boolean() }).optional(),
  rulesVersion: z.number().int().nonnegative().optional(),
});
export type AlertsAnswer = z.infer<typeof AlertsAnswer>;

/**
 * POST /api/rca — an incident window given as data (offline postmortems, benchmarks): OTLP JSON traces (required),
 * an optional OTLP JSON baseline of healthy traffic, kernel events, and engine settings (checked by the engine's own
 * schema).
 */
export const RcaWindowRequest = z.object({
  traces: z.unknown(),
  baseline: z.unknown().optional(),
  kernelEvents: z.array(KernelEvent).max(1_000_000).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});
export type RcaWindowRequest = z.infer<typeof RcaWindowRequest>;

/** GET /api/rca?from&to[&service][&maxTraces] — root cause of a time range, from the traces the proxy can read. */
export const RcaRangeQuery = z.object({
  from: z.number(),
  to: z.number(),
  /** Only traces that pass through this service. */
  service: z.string().optional(),
  /** At most this many traces are analysed (failed and slowest first, then a spread over the range). */
  maxTraces: z.number().int().positive().max(5000).optional(),
});
export type RcaRangeQuery = z.infer<typeof RcaRangeQuery>;

/** What a range root cause read: how many traces the range had (as far as the source tells), how many it analysed, how. */
export const RcaRangeSample = z.object({
  /** Traces found in the range (embedded store: all it holds; Tempo: those its searches returned). */
  found: z.number().int().nonnegative(),
  analysed: z.number().int().nonnegative(),
  /** Failed traces among the analysed ones (all of the range's failed traces are taken first). */
  failed: z.number().int().nonnegative(),
  /** true when `analysed` < what the range holds (Tempo's searches are themselves a sample). */
  sampled: z.boolean(),
  how: z.string(),
});
export type RcaRangeSample = z.infer<typeof RcaRangeSample>;

/** GET /api/rca answer: a root-cause answer over the range, what it read (`sample`), and its sources. */
export const RcaRangeAnswer = RcaAnswer.extend({
  from: z.number(),
  to: z.number(),
  service: z.string().optional(),
  window: z.object({
    traces: z.number().int().nonnegative(),
    spans: z.number().int().nonnegative(),
    fromMs: z.number().optional(),
    toMs: z.number().optional(),
    anomalousTraces: z.number().int().nonnegative(),
  }),
  sample: RcaRangeSample,
  sources: z.array(SourceStatus),
});
export type RcaRangeAnswer = z.infer<typeof RcaRangeAnswer>;
