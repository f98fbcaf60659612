import { z } from 'zod';
import { FaultTarget, FaultVia, ScenarioFaultKind } from './faults';
import { SourceStatus } from './common';
import { Candidate, CriticalPathItem } from './rca';
import { Capacity, CapacityStep } from './capacity';
import { FallbackSummary } from './fallback';

/**
 * Load-test runs: what `hopscope-load` reports to the proxy (register, heartbeats, finish) and what the proxy serves
 * (`GET /api/runs`, `GET /api/runs/:runId`, `GET /api/runs/:runId/compare/:baselineRunId`). A run is the spine of the
 * product: its client-side truth, every request's trace id, its verdicts and its window of traces.
 */

/** One pattern for every id that travels in W3C baggage, Prometheus labels and URLs: keep them plain. */
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const PLAIN_ID_RULE = '1–128 letters, digits, _ . : - (starting with a letter or digit)';
export const RUN_ID_MESSAGE = `a run id is ${PLAIN_ID_RULE}`;
export const WORKER_ID_MESSAGE = `a worker id is ${PLAIN_ID_RULE}`;

/** Run ids travel in W3C baggage (`hopscope.run_id`), Prometheus labels (`run_id`) and URLs. */
export const RunId = z.string().regex(PLAIN_ID, RUN_ID_MESSAGE);
export type RunId = z.infer<typeof RunId>;

/** A worker of a run (its client metrics' `service.instance.id`, the run record's workers): the run id's rule. */
export const WorkerId = z.string().regex(PLAIN_ID, WORKER_ID_MESSAGE);
export type WorkerId = z.infer<typeof WorkerId>;

/**
 * A worker's clock reading, epoch ms, within 2000–2100: a run's window bounds every query the run page makes, so an
 * absurd one (9e15, seconds for ms) is refused at registration instead of breaking those queries later.
 */
export const RunEpochMs = z
  .number()
  .int()
  .min(946_684_800_000, 'an epoch time in ms after 2000-01-01')
  .max(4_102_444_800_000, 'an epoch time in ms before 2100-01-01');

export const RunStatus = z.enum(['running', 'passed', 'failed', 'aborted']);
export type RunStatus = z.infer<typeof RunStatus>;

/** Percentile summary of one client-side measurement, in ms (NaN-free: absent figures are null). */
export const LatencySummary = z.object({
  count: z.number().int().nonnegative(),
  mean: z.number().nullable(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  p95: z.number().nullable(),
  p99: z.number().nullable(),
  max: z.number().nullable(),
});
export type LatencySummary = z.infer<typeof LatencySummary>;

/**
 * A mergeable latency sketch (log-bucketed, relative accuracy `alpha`): each worker of a distributed run sends one per
 * measurement so the proxy can merge percentiles across workers; merged figures say they are bucketed.
 */
export const LatencySketch = z.object({
  alpha: z.number().positive().max(0.1),
  /** bucket index → count; value v ≥ minMs falls in bucket ceil(log(v/minMs) / log((1+alpha)/(1-alpha))). */
  buckets: z.record(z.string().regex(/^-?\d+$/), z.number().int().positive()),
  /** values below this (including 0) are counted here. */
  zeroCount: z.number().int().nonnegative(),
  minMs: z.number().positive(),
  count: z.number().int().nonnegative(),
  sum: z.number().nonnegative(),
  max: z.number().nonnegative(),
});
export type LatencySketch = z.infer<typeof LatencySketch>;

/** What the client measured over a whole run (one worker, or the merge of all workers). */
export const ClientSummary = z.object({
  durationS: z.number().nonnegative(),
  sent: z.number().int().nonnegative(),
  completed: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  /** Served, but by a fallback model (`gen_ai.request.model` ≠ the model that answered): not a healthy request. */
  degraded: z.number().int().nonnegative().default(0),
  errors: z.object({
    total: z.number().int().nonnegative(),
    byKind: z.record(z.string(), z.number().int().nonnegative()),
  }),
  timeouts: z.number().int().nonnegative(),
  droppedClientSide: z.number().int().nonnegative(),
  rps: z.object({
    targetMean: z.number().nonnegative(),
    sent: z.number().nonnegative(),
    completed: z.number().nonnegative(),
  }),
  latencyMs: LatencySummary,
  ttftMs: LatencySummary,
  itlMs: LatencySummary,
  tpotMs: LatencySummary,
  outputTokens: z.number().int().nonnegative(),
  outputTokensPerS: z.number().nonnegative(),
  goodput: z.object({
    good: z.number().int().nonnegative(),
    rps: z.number().nonnegative(),
    ratio: z.number().min(0).max(1),
  }),
  schedule: z.object({
    lateOver10ms: z.number().int().nonnegative(),
    lateRatio: z.number().min(0).max(1),
    lateP99Ms: z.number().nullable(),
    lateMaxMs: z.number().nullable(),
  }),
  /** The seed's baseline table: RAG recall (retrieved ∩ expected document ids) and agent task completion, when known. */
  quality: z
    .object({
      ragRecall: z.object({ mean: z.number().min(0).max(1).nullable(), n: z.number().int().nonnegative() }),
      agentTaskCompletion: z.object({ rate: z.number().min(0).max(1).nullable(), n: z.number().int().nonnegative() }),
    })
    .optional(),
  /** Requests whose trace id the client does not know (the server answered no `traceresponse` and none was sent). */
  untraced: z.number().int().nonnegative().default(0),
  sketches: z.object({ e2e: LatencySketch, ttft: LatencySketch }).optional(),
  /** A sweep's steps (a ramp's or step profile's windows), counted by the client: what the capacity is found in. */
  steps: z.array(CapacityStep).max(1000).optional(),
  /** Answers per model path (primary vs fall-back), graded, and the fall-back share over time (contract/fallback.ts). */
  fallback: FallbackSummary.optional(),
  notes: z.array(z.string()).default([]),
});
export type ClientSummary = z.infer<typeof ClientSummary>;

export const RequestOutcome = z.enum(['ok', 'degraded', 'error', 'timeout']);
export type RequestOutcome = z.infer<typeof RequestOutcome>;

/** One request of a run, as kept in the record (the slowest and the failed ones), one click from its root cause. */
export const RunRequest = z.object({
  /** 32 hex digits, or null: "no trace id from the server". */
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable(),
  /** Where the id came from: the `traceparent` the client sent, the server's `traceresponse`, or nowhere. */
  traceIdSource: z.enum(['sent', 'traceresponse', 'none']),
  /**
   * The trace was head-sampled (kept whole): the sampled flag of the traceparent sent, or of the server's
   * traceresponse. False: the trace was not kept (the run page says so rather than link to a 404); absent in records
   * written before it was recorded.
   */
  traceSampled: z.boolean().optional(),
  startMs: z.number(),
  e2eMs: z.number().nonnegative(),
  ttftMs: z.number().nonnegative().nullable(),
  outcome: RequestOutcome,
  /** e.g. http_503, timeout, ECONNREFUSED, fallback:hopscope-llama-8b-v1→hopscope-llama-1b */
  detail: z.string().optional(),
  model: z.string().optional(),
  route: z.string().optional(),
  backend: z.string().optional(),
});
export type RunRequest = z.infer<typeof RunRequest>;

/** A fault of the scenario's schedule as the load generator applied it through the chain's fault API. */
export const AppliedFault = z.object({
  atS: z.number().nonnegative(),
  target: FaultTarget,
  kind: ScenarioFaultKind,
  /** Where it was applied; absent: the chain (runs recorded before Chaos Mesh). */
  via: FaultVia.optional(),
  /** The Chaos Mesh resource, for via chaos-mesh: `NetworkChaos ns/name`. */
  resource: z.string().optional(),
  magnitude: z.number().optional(),
  forS: z.number().positive().optional(),
  pod: z.string().optional(),
  /** The chain's fault id, when the fault API accepted it. */
  id: z.string().optional(),
  startMs: z.number().optional(),
  endMs: z.number().optional(),
  /** Why it was not applied or ended early. */
  error: z.string().optional(),
});
export type AppliedFault = z.infer<typeof AppliedFault>;

export const ThresholdVerdict = z.object({
  threshold: z.string(),
  metric: z.string(),
  actual: z.number().nullable(),
  pass: z.boolean(),
});
export type ThresholdVerdict = z.infer<typeof ThresholdVerdict>;

/** `--max-regression 'p99_ms:+10%'` against a baseline run, judged by the load generator (and stored with the run). */
export const RegressionVerdict = z.object({
  metric: z.string(),
  /** As written: `+10%` (relative) or `+0.01` (absolute). */
  allowed: z.string(),
  baseline: z.number().nullable(),
  actual: z.number().nullable(),
  /** actual − baseline, and (actual − baseline) / baseline when baseline ≠ 0. */
  delta: z.number().nullable(),
  deltaRatio: z.number().nullable(),
  pass: z.boolean(),
  /** What `baseline` is: the baseline run's figure (absent: the same), or this run's primary path (fallback_completion). */
  versus: z.enum(['baseline_run', 'primary_path']).optional(),
});
export type RegressionVerdict = z.infer<typeof RegressionVerdict>;

/** POST /api/runs — a worker registers a run (or, with `join`, joins a running one of the same scenario). */
export const RunRegistration = z.object({
  runId: RunId,
  scenario: z.string().min(1).max(200),
  workerId: WorkerId,
  /** true: this worker joins a running run (distributed load); false/absent: a reused run id is refused (409). */
  join: z.boolean().optional(),
  startMs: RunEpochMs,
  target: z.string(),
  /** The resolved scenario and flags (what was run), stored as given. */
  options: z.record(z.string(), z.unknown()),
  thresholds: z.array(z.string()).default([]),
  faults: z.array(AppliedFault).default([]),
  /** Where Prometheus can scrape this worker's client metrics (served as Prometheus HTTP SD by the proxy). */
  metricsUrl: z.string().url().optional(),
  baselineRunId: RunId.optional(),
});
export type RunRegistration = z.infer<typeof RunRegistration>;

/** POST /api/runs/:runId/heartbeat — every few seconds while a worker runs; a run without any is marked aborted. */
export const RunHeartbeat = z.object({
  workerId: WorkerId,
  sent: z.number().int().nonnegative(),
  completed: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  inFlight: z.number().int().nonnegative(),
});
export type RunHeartbeat = z.infer<typeof RunHeartbeat>;

/** POST /api/runs/:runId/finish — a worker's end of run. The run ends when every worker has finished. */
export const RunFinish = z.object({
  workerId: WorkerId,
  endMs: RunEpochMs,
  /** passed / failed by this worker's own thresholds and regressions; aborted when interrupted. */
  status: z.enum(['passed', 'failed', 'aborted']),
  summary: ClientSummary,
  thresholds: z.array(ThresholdVerdict).default([]),
  regressions: z.array(RegressionVerdict).default([]),
  faults: z.array(AppliedFault).default([]),
  /** At most 100 each. */
  slowest: z.array(RunRequest).max(100).default([]),
  failed: z.array(RunRequest).max(100).default([]),
});
export type RunFinish = z.infer<typeof RunFinish>;

/** One row of GET /api/runs. Figures are the client's own; null while unknown (a running run has no summary yet). */
export const RunListItem = z.object({
  runId: RunId,
  scenario: z.string(),
  status: RunStatus,
  startMs: z.number(),
  endMs: z.number().nullable(),
  durationS: z.number().nullable(),
  targetRps: z.number().nullable(),
  achievedRps: z.number().nullable(),
  ttftP99Ms: z.number().nullable(),
  e2eP99Ms: z.number().nullable(),
  goodputRatio: z.number().nullable(),
  errors: z.number().int().nonnegative().nullable(),
  errorRate: z.number().nullable(),
  workers: z.number().int().nonnegative(),
  /** While running: the latest heartbeat totals over all workers. */
  live: z
    .object({
      sent: z.number(),
      completed: z.number(),
      errors: z.number(),
      inFlight: z.number(),
      lastHeartbeatMs: z.number(),
    })
    .nullable(),
});
export type RunListItem = z.infer<typeof RunListItem>;

export const RunList = z.object({ runs: z.array(RunListItem), total: z.number().int().nonnegative() });
export type RunList = z.infer<typeof RunList>;

/** GET /api/runs/:runId */
export const RunRecord = RunListItem.extend({
  target: z.string(),
  options: z.record(z.string(), z.unknown()),
  baselineRunId: RunId.nullable(),
  thresholds: z.array(ThresholdVerdict),
  regressions: z.array(RegressionVerdict),
  summary: ClientSummary.nullable(),
  /** When several workers reported: how their summaries were merged (counts exact, percentiles from sketches). */
  merge: z
    .object({ workers: z.number().int().positive(), percentiles: z.enum(['exact', 'bucketed']), note: z.string() })
    .nullable(),
  faults: z.array(AppliedFault),
  slowest: z.array(RunRequest),
  failed: z.array(RunRequest),
  /** Why a run was aborted (no heartbeat since …, interrupted by the client). */
  abortReason: z.string().nullable(),
  /** A sweep's or ramp's capacity (the proxy reads the hops' saturation signals); null for other profiles. */
  capacity: Capacity.nullable().optional(),
});
export type RunRecord = z.infer<typeof RunRecord>;

/** Per-hop latency of one side of a run comparison (from the runs' traces, sampled as the traces were). */
export const HopDelta = z.object({
  service: z.string(),
  operation: z.string().optional(),
  runP50Ms: z.number().nullable(),
  runP99Ms: z.number().nullable(),
  baselineP50Ms: z.number().nullable(),
  baselineP99Ms: z.number().nullable(),
  deltaP50Ms: z.number().nullable(),
  runCount: z.number().int().nonnegative(),
  baselineCount: z.number().int().nonnegative(),
});
export type HopDelta = z.infer<typeof HopDelta>;

/** GET /api/runs/:runId/compare/:baselineRunId — which hop changed: the root-cause answer's shape, plus per-hop deltas. */
export const RunCompareAnswer = z.object({
  runId: RunId,
  baselineRunId: RunId,
  tookMs: z.number().nonnegative(),
  criticalPath: z.array(CriticalPathItem),
  candidates: z.array(Candidate),
  missing: z.array(z.string()),
  hops: z.array(HopDelta),
  traces: z.object({
    run: z.number().int().nonnegative(),
    baseline: z.number().int().nonnegative(),
    source: z.enum(['embedded', 'tempo']),
    sampled: z.boolean(),
  }),
  /** Client-side figures side by side (from the run records: counts every request). */
  client: z.object({
    run: z.object({
      e2eP99Ms: z.number().nullable(),
      ttftP99Ms: z.number().nullable(),
      errorRate: z.number().nullable(),
    }),
    baseline: z.object({
      e2eP99Ms: z.number().nullable(),
      ttftP99Ms: z.number().nullable(),
      errorRate: z.number().nullable(),
    }),
  }),
});
export type RunCompareAnswer = z.infer<typeof RunCompareAnswer>;

/**
 * One latency histogram over a run's window, read from Prometheus: how many requests it counted, their mean and
 * percentiles (estimated from the histogram's buckets, by linear interpolation as `histogram_quantile` does), in ms.
 */
export const WindowHistogram = z.object({
  metric: z.string(),
  /** The PromQL of the buckets these figures come from (the panel's Inspect and Explore show it). */
  query: z.string(),
  count: z.number().nonnegative().nullable(),
  meanMs: z.number().nullable(),
  p50Ms: z.number().nullable(),
  p90Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
});
export type WindowHistogram = z.infer<typeof WindowHistogram>;

/** Whose clock a time-to-first-token is measured on. */
export const TtftLayerName = z.enum(['client', 'caller', 'server', 'server_queue', 'server_prefill']);
export type TtftLayerName = z.infer<typeof TtftLayerName>;

export const TtftLayer = z.object({
  layer: TtftLayerName,
  label: z.string(),
  /** What this clock covers, in words. */
  covers: z.string(),
  /** null: the metric has no data in the window (then `missing` says so). */
  figures: WindowHistogram.nullable(),
});
export type TtftLayer = z.infer<typeof TtftLayer>;

/**
 * One part of the client's mean TTFT. Means add up (percentiles do not): the parts sum to the client's mean. A part is
 * `measured` when a metric times it, otherwise it is the remainder of two measured means, named for what lies between
 * those two clocks.
 */
export const TtftGapPart = z.object({
  part: z.enum([
    'before_caller',
    'caller_to_server',
    'before_server',
    'server_queue',
    'server_prefill',
    'server_other',
  ]),
  label: z.string(),
  meanMs: z.number().nullable(),
  measured: z.boolean(),
  /** The metric that measures it, or the subtraction it is the remainder of. */
  source: z.string(),
  /** `gap`: before the server's clock starts (client − server TTFT); `server`: inside the server's own TTFT. */
  side: z.enum(['gap', 'server']),
});
export type TtftGapPart = z.infer<typeof TtftGapPart>;

/**
 * GET /api/runs/:runId/ttft — client vs server time to first token over the run's window: what the load generator
 * measured (`hopscope_load_time_to_first_token_seconds{run_id}`), what the caller of the LLM measured
 * (`gen_ai_client_operation_time_to_first_chunk_seconds`, when the gateway exports it) and vLLM's own histogram
 * (`vllm:time_to_first_token_seconds`, with its queue and prefill times), and the gap between them, part by part.
 */
export const RunTtftAnswer = z.object({
  runId: RunId,
  from: z.number(),
  to: z.number(),
  stepMs: z.number().positive(),
  layers: z.array(TtftLayer),
  gap: z.object({
    /** client mean − server mean TTFT (null when either is missing). */
    meanMs: z.number().nullable(),
    /** client P99 − server P99: a difference of percentiles, not a decomposition. */
    p99DifferenceMs: z.number().nullable(),
    parts: z.array(TtftGapPart),
  }),
  /** P50 and P99 over time, per layer (client and server), in ms. */
  series: z.array(
    z.object({
      layer: TtftLayerName,
      stat: z.enum(['p50', 'p99']),
      query: z.string(),
      points: z.array(z.tuple([z.number(), z.number().nullable()])),
    })
  ),
  /** What a reader must know to weigh the comparison (populations, estimation). */
  notes: z.array(z.string()),
  missing: z.array(z.string()),
  sources: z.array(SourceStatus),
});
export type RunTtftAnswer = z.infer<typeof RunTtftAnswer>;

/** The parts of one request's client TTFT, in the order the time passes. */
export const TtftRequestPartName = z.enum([
  'client_to_gateway',
  'before_llm',
  'engine_queue',
  'engine_prefill',
  'way_back',
]);
export type TtftRequestPartName = z.infer<typeof TtftRequestPartName>;

export const TtftRequestPart = z.object({
  part: TtftRequestPartName,
  label: z.string(),
  /** null: not known for this request (no engine span, no first chunk, no gateway span); `missing` says why. */
  ms: z.number().nullable(),
  /** Where it comes from: the spans' times, the engine's own attribute, or the remainder of the client's TTFT. */
  source: z.string(),
});
export type TtftRequestPart = z.infer<typeof TtftRequestPart>;

/** One of a run's slowest or failed requests, its client TTFT split from its trace and the engine's span. */
export const RunTtftRequest = z.object({
  traceId: z.string(),
  list: z.enum(['slowest', 'failed']),
  outcome: RequestOutcome,
  startMs: z.number(),
  /** The client's TTFT (null: no first chunk arrived). */
  ttftMs: z.number().nullable(),
  e2eMs: z.number(),
  /** The inference server whose first token the client waited for, when its span was found. */
  llm: z
    .object({
      service: z.string(),
      pod: z.string(),
      engine: z.enum(['vllm', 'sglang', 'tgi']),
      spanId: z.string(),
    })
    .nullable(),
  parts: z.array(TtftRequestPart),
  missing: z.array(z.string()),
});
export type RunTtftRequest = z.infer<typeof RunTtftRequest>;

/**
 * GET /api/runs/:runId/ttft/requests — the client TTFT of a run's slowest and failed requests (those with a trace id),
 * each split into client→gateway network, the hops before the LLM, the engine's queue and prefill (from its own span:
 * vLLM `gen_ai.latency.*`), and the first chunk's way back (the remainder); with each part's mean over the requests
 * that have it. Times from different clocks (the client's, the gateway's) are subtracted as they are: `notes` says so.
 */
export const RunTtftRequestsAnswer = z.object({
  runId: RunId,
  requests: z.array(RunTtftRequest),
  average: z.array(
    z.object({
      part: TtftRequestPartName,
      label: z.string(),
      meanMs: z.number().nullable(),
      /** Requests this mean is over. */
      n: z.number().int().nonnegative(),
    })
  ),
  notes: z.array(z.string()),
  missing: z.array(z.string()),
});
export type RunTtftRequestsAnswer = z.infer<typeof RunTtftRequestsAnswer>;
