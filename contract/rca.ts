import { z } from 'zod';
import { EvidenceKind } from './evidence';
import { Span } from './traces';

export const Evidence = z
  .object({
    kind: EvidenceKind, // labels and meanings: EVIDENCE_KINDS in ./evidence
    summary: z.string(),
  })
  .catchall(z.unknown());
export type Evidence = z.infer<typeof Evidence>;

export const Candidate = z.object({
  rank: z.number().int().positive(),
  service: z.string(),
  pod: z.string(),
  spanId: z.string().optional(),
  operation: z.string().optional(),
  score: z.number(),
  selfMs: z.number().optional(),
  baselineMs: z.number().optional(),
  evidence: z.array(Evidence),
});
export type Candidate = z.infer<typeof Candidate>;

/**
 * One span on the critical path, in order of first appearance (the anchor first, each span after the one it runs
 * under). Times are the span's own clock; `skewCorrectedMs` is how far the engine shifted it to fit its parent.
 */
export const CriticalPathItem = z.object({
  spanId: z.string(),
  /** The span's parent in the trace (absent for the trace's roots and orphans). */
  parentSpanId: z.string().optional(),
  /** Depth below the anchor (0 = the anchor). */
  depth: z.number().int().nonnegative(),
  service: z.string(),
  pod: z.string(),
  operation: z.string(),
  kind: Span.shape.kind,
  status: Span.shape.status,
  startMs: z.number(),
  endMs: z.number(),
  durationMs: z.number(),
  /** Exclusive time: the span's window minus the union of its synchronous children. */
  selfMs: z.number(),
  /** Time the critical path spends in this span itself. */
  onPathMs: z.number(),
  /** Client span: its duration minus its server child's (network, TLS, queueing). */
  gapMs: z.number().optional(),
  baselineSelfMs: z.number().optional(),
  skewCorrectedMs: z.number().optional(),
});
export type CriticalPathItem = z.infer<typeof CriticalPathItem>;

/**
 * Where a live root cause took its kernel events from: the exporters' rings (every event, while they still reach back
 * to the window), the notable events the proxy keeps in its database (when they do not), or both merged.
 */
export const KernelEvidenceUsed = z.object({
  source: z.enum(['rings', 'kept', 'rings+kept', 'none']),
  /** The oldest event the exporters' rings still hold (the latest of them), when known. */
  ringsFromMs: z.number().optional(),
  /** Nothing older than this is kept any more (HOPSCOPE_KERNEL_EVIDENCE_RETENTION). */
  retainedFromMs: z.number().optional(),
  /** Evidence has been kept since then (the proxy's first read of an exporter). */
  keptSinceMs: z.number().optional(),
  /** Windows of the range for which evidence is known to be missing. */
  gaps: z
    .array(
      z.object({
        node: z.string().nullable(),
        fromMs: z.number(),
        toMs: z.number(),
        reason: z.string(),
        missed: z.number().nullable(),
      })
    )
    .optional(),
});
export type KernelEvidenceUsed = z.infer<typeof KernelEvidenceUsed>;

/** One phase inside an inference server's request span, as the engine itself reports it. */
export const LlmPhase = z.object({
  /** vLLM and SGLang: queue, prefill, decode; TGI's router: validation, queue, inference. */
  name: z.enum(['validation', 'queue', 'prefill', 'decode', 'inference']),
  durationMs: z.number().nonnegative(),
  /** Start, where the engine's timings place it (queue first, then prefill, then decode). */
  startMs: z.number().optional(),
  /** The same operation's phase in healthy traffic (median), when a baseline exists. */
  baselineMs: z.number().optional(),
});
export type LlmPhase = z.infer<typeof LlmPhase>;

/** Where one figure of an engine's state came from: the metric name found (an old or new release's) and when. */
export const EngineMetricProvenance = z.object({
  /** The figure (`waiting`, `running`, `kvCacheUsage`, `preemptionsPerMin`, `prefixCacheHitRate`, …). */
  figure: z.string(),
  /** The metric name Prometheus had, e.g. `vllm:kv_cache_usage_perc` or the older `vllm:gpu_cache_usage_perc`. */
  metric: z.string(),
  /** The instant evaluated (epoch ms). */
  instantMs: z.number(),
  scrapeIntervalS: z.number().optional(),
});
export type EngineMetricProvenance = z.infer<typeof EngineMetricProvenance>;

/** The inference engine's state on a pod at an instant, from its own metrics; absent figures are absent, never 0. */
export const EngineState = z.object({
  waiting: z.number().optional(),
  running: z.number().optional(),
  /** 0..1 */
  kvCacheUsage: z.number().optional(),
  preemptionsPerMin: z.number().optional(),
  /** 0..1 */
  prefixCacheHitRate: z.number().optional(),
  provenance: z.array(EngineMetricProvenance),
});
export type EngineState = z.infer<typeof EngineState>;

/** The phases of one inference server span (vLLM `llm_request`, SGLang's request span, TGI's router span). */
export const LlmPhases = z.object({
  spanId: z.string(),
  service: z.string(),
  pod: z.string(),
  engine: z.enum(['vllm', 'sglang', 'tgi']),
  /** The span's name and the attribute set it was read from (e.g. `llm_request` / `gen_ai.latency.*`). */
  source: z.string(),
  startMs: z.number(),
  durationMs: z.number(),
  phases: z.array(LlmPhase),
  promptTokens: z.number().optional(),
  completionTokens: z.number().optional(),
  /** Usual prompt tokens of this operation (baseline median), when known. */
  baselinePromptTokens: z.number().optional(),
  engineState: EngineState.optional(),
});
export type LlmPhases = z.infer<typeof LlmPhases>;

/** A root-cause answer for one trace (GET /traces/:id/rca) or an incident window (POST /rca, no path). */
export const RcaAnswer = z.object({
  traceId: z.string().optional(),
  tookMs: z.number().nonnegative(),
  criticalPath: z.array(CriticalPathItem),
  candidates: z.array(Candidate),
  missing: z.array(z.string()),
  /** Live root causes: where the kernel events came from. */
  kernelEvidence: KernelEvidenceUsed.optional(),
  /**
   * One sentence a person can act on, from the top candidate's strongest evidence, e.g. "llm-vllm-1 saturated: queued
   * 2.8 s (usually 40 ms) behind 37 waiting requests, KV cache 98 %, 12 preemptions/min".
   */
  verdict: z.string().optional(),
  /** The inference server spans of the answer (per trace: those on the path; per window: the worst few), split. */
  llmPhases: z.array(LlmPhases).optional(),
});
export type RcaAnswer = z.infer<typeof RcaAnswer>;

/** A saved root-cause answer without the answer itself (lists, links). */
export const SavedRcaAnswerMeta = z.object({
  id: z.string(),
  traceId: z.string().nullable(),
  fromMs: z.number().nullable(),
  toMs: z.number().nullable(),
  title: z.string().nullable(),
  createdMs: z.number(),
});
export type SavedRcaAnswerMeta = z.infer<typeof SavedRcaAnswerMeta>;

/** GET /api/rca/answers/:id: the answer as it was saved, for a postmortem to link to. */
export const SavedRcaAnswer = SavedRcaAnswerMeta.extend({ answer: RcaAnswer.catchall(z.unknown()) });
export type SavedRcaAnswer = z.infer<typeof SavedRcaAnswer>;

/**
 * POST /api/rca/answers: save what the user is looking at — a trace's root cause (`traceId`) or a range's (`from`,
 * `to`, optional `service`), computed now; or an `answer` given as is (e.g. a POST /api/rca window answer).
 */
export const SaveRcaAnswerRequest = z.object({
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'a trace id: 32 lowercase hex digits')
    .optional(),
  from: z.number().optional(),
  to: z.number().optional(),
  service: z.string().max(200).optional(),
  title: z.string().max(200).optional(),
  answer: z.unknown().optional(),
});
export type SaveRcaAnswerRequest = z.infer<typeof SaveRcaAnswerRequest>;
