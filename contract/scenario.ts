import { z } from 'zod';
import { ChaosMeshTarget, ClusterFaultKind, FaultTarget, FaultVia, ScenarioFaultKind } from './faults';

/**
 * Load-test scenarios: what `hopscope-load --scenario NAME|FILE` runs (YAML or JSON), and the line schema of a JSONL
 * prompt dataset. Every field has a default, so a scenario says only what makes it itself; command-line flags override
 * fields after validation.
 */

const DURATION_RE = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$/;
const DURATION_UNIT_S: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** "250ms", "30s", "2m", "1h" or a bare number of seconds → seconds; undefined when not a duration. */
export function durationSeconds(text: string): number | undefined {
  const m = DURATION_RE.exec(text);
  return m ? Number(m[1]) * DURATION_UNIT_S[m[2] ?? 's'] : undefined;
}

/** A duration: a number of seconds, or a string such as `500ms`, `60s`, `2m`, `1h`. Parsed to seconds. */
export const Duration = z
  .union([z.number(), z.string()], { error: 'expected a duration like 500ms, 30s, 2m or a number of seconds' })
  .transform((v, ctx) => {
    const s = typeof v === 'number' ? v : durationSeconds(v);
    if (s === undefined || !Number.isFinite(s) || s < 0) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration like 500ms, 30s, 2m or a number of seconds ≥ 0 (got ${JSON.stringify(v)})`,
      });
      return z.NEVER;
    }
    return s;
  });

/** Threshold and regression metrics, read from a ClientSummary (`--threshold 'p99_ms<2000'`). */
export const THRESHOLD_METRICS = {
  p50_ms: 'end-to-end latency P50 (ms)',
  p90_ms: 'end-to-end latency P90 (ms)',
  p95_ms: 'end-to-end latency P95 (ms)',
  p99_ms: 'end-to-end latency P99 (ms)',
  ttft_p50_ms: 'time to first token P50 (ms)',
  ttft_p99_ms: 'time to first token P99 (ms)',
  itl_p99_ms: 'inter-token latency P99 (ms)',
  tpot_p50_ms: 'time per output token P50 (ms)',
  tpot_p99_ms: 'time per output token P99 (ms)',
  error_rate: 'failed / sent (0..1)',
  timeout_rate: 'timed out / sent (0..1)',
  degraded_rate: 'served by a fallback model / sent (0..1)',
  rps: 'completed requests per second',
  goodput_rps: 'requests per second meeting every SLO',
  goodput_ratio: 'share of sent requests meeting every SLO (0..1)',
  late_ratio: 'share of requests sent more than 10 ms after their scheduled time',
  rag_recall: 'mean RAG recall: retrieved ∩ expected document ids / expected (0..1)',
  agent_task_completion: 'share of agent tasks completed (0..1)',
  capacity_rps: 'sweep/ramp: the highest offered rate (req/s) whose step held the SLOs (capacity.maxGoodRps)',
  fallback_completion:
    "agent tasks completed on the fall-back model path / its agent tasks (0..1); as --max-regression, against the same run's primary path",
} as const;
export type ThresholdMetric = keyof typeof THRESHOLD_METRICS;
export const ThresholdMetric = z.enum(Object.keys(THRESHOLD_METRICS) as [ThresholdMetric, ...ThresholdMetric[]]);

/** `p99_ms<2000`: metric, operator, number. */
export const THRESHOLD_RE = /^\s*([a-z0-9_]+)\s*(<=|>=|<|>)\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$/;
/** One rule of `--max-regression`: `p99_ms:+10%` (relative) or `error_rate:+0.01` (absolute); `-` for figures that must not fall. */
export const REGRESSION_RULE_RE = /^\s*([a-z0-9_]+)\s*:\s*([+-])\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$/;

const knownMetric = (m: string, ctx: z.RefinementCtx): void => {
  if (!(m in THRESHOLD_METRICS))
    ctx.addIssue({
      code: 'custom',
      message: `unknown metric ${m}; allowed: ${Object.keys(THRESHOLD_METRICS).join(', ')}`,
    });
};

export const ThresholdText = z.string().superRefine((t, ctx) => {
  const m = THRESHOLD_RE.exec(t);
  if (!m)
    ctx.addIssue({
      code: 'custom',
      message: `bad threshold ${JSON.stringify(t)}: expected <metric><op><number>, e.g. 'p99_ms<2000'`,
    });
  else knownMetric(m[1], ctx);
});

/** `p99_ms:+10%,ttft_p99_ms:+15%,error_rate:+0.01`. */
export const MaxRegressionText = z.string().superRefine((t, ctx) => {
  const rules = t
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!rules.length) ctx.addIssue({ code: 'custom', message: 'expected at least one rule, e.g. p99_ms:+10%' });
  for (const r of rules) {
    const m = REGRESSION_RULE_RE.exec(r);
    if (!m)
      ctx.addIssue({
        code: 'custom',
        message: `bad regression rule ${JSON.stringify(r)}: expected <metric>:+<n>% or <metric>:+<n>, e.g. p99_ms:+10%`,
      });
    else knownMetric(m[1], ctx);
  }
});

const weight = z.number().nonnegative('a weight cannot be negative');
const probability = z.number().min(0).max(1);

/** Where the load goes. `backend`: the chain's `x-hopscope-backend` (none for any other server). */
export const ScenarioTarget = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).default('http://127.0.0.1:3310'),
  path: z.string().startsWith('/', 'a path starts with /').default('/v1/chat/completions'),
  backend: z.enum(['vllm', 'tgi', 'sglang', 'mix', 'none']).default('mix'),
  /** The chain's control API, for the fault schedule; `none` when the target has none. */
  control: z
    .union([z.literal('none'), z.url({ protocol: /^https?$/, error: 'expected an http(s) URL or none' })])
    .default('http://127.0.0.1:3319'),
});
export type ScenarioTarget = z.infer<typeof ScenarioTarget>;

/** Which route each request takes (weights): plain chat, retrieval-augmented, agent with tool calls. */
export const RouteMix = z
  .strictObject({ chat: weight.default(0), rag: weight.default(0), agent: weight.default(0) })
  .refine((r) => r.chat + r.rag + r.agent > 0, 'at least one route needs a weight > 0');
export type RouteMix = z.infer<typeof RouteMix>;

/** The seeded synthesiser: probabilities of each perturbation and the long-tail context length. */
export const SynthPrompts = z.strictObject({
  kind: z.literal('synth'),
  synonymP: probability.default(0.5),
  inversionP: probability.default(0.2),
  nestingP: probability.default(0.25),
  multiTurnP: probability.default(0.3),
  /** Median extra context tokens (log-normal, σ = 1), and the cap. */
  medianContextTokens: z.number().int().nonnegative().max(100_000).default(60),
  maxContextTokens: z.number().int().nonnegative().max(1_000_000).default(3000),
});

/** Your own prompts: a JSONL file (one PromptLine a line), relative to the scenario file. */
export const DatasetPrompts = z.strictObject({
  kind: z.literal('dataset'),
  file: z.string().min(1),
  /** sequential: line after line, round and round; shuffle: a seeded random line per request. */
  order: z.enum(['sequential', 'shuffle']).default('sequential'),
});

export const ScenarioPrompts = z.discriminatedUnion('kind', [SynthPrompts, DatasetPrompts], {
  error: 'prompts.kind must be synth or dataset',
});
export type ScenarioPrompts = z.infer<typeof ScenarioPrompts>;

export const ScenarioRequest = z.strictObject({
  stream: z.boolean().default(true),
  maxTokens: z.number().int().min(1).max(32768).default(64),
  timeout: Duration.refine((s) => s > 0 && s <= 3600, 'the timeout must be > 0 and ≤ 1h').default(60),
  /** Send a W3C traceparent (the trace id is then known before the answer); otherwise the server decides. */
  traceparent: z.boolean().default(true),
  /**
   * The share of those traceparents sent sampled (flags 01, the rest 00), decided by the trace id as a ratio sampler
   * does; absent: all up to 200 req/s, above that 200 / the profile's peak rate (hopscope-load decides it).
   */
  traceSample: z.number().min(0).max(1).optional(),
});

const rate = z.number().positive('a rate must be > 0').max(100_000, 'a rate must be ≤ 100000');

/** The open-loop load profile (the kinds of loadgen/src/load/profiles.ts). */
export const ScenarioLoad = z
  .strictObject({
    profile: z.enum(['constant', 'ramp', 'step', 'spike', 'sweep']).default('constant'),
    rps: rate.default(5),
    duration: Duration.refine((s) => s > 0 && s <= 7 * 24 * 3600, 'the duration must be > 0 and ≤ 7 days').default(30),
    arrivals: z.enum(['uniform', 'poisson']).default('poisson'),
    startRps: rate.optional(),
    stepRps: rate.optional(),
    stepEvery: Duration.refine((s) => s > 0, 'must be > 0').optional(),
    spikeRps: rate.optional(),
    spikeAt: Duration.refine((s) => s > 0, 'must be > 0').optional(),
    spikeFor: Duration.refine((s) => s > 0, 'must be > 0').optional(),
    /** sweep: how many constant rates from startRps to rps, each held duration / steps. */
    steps: z.number().int().min(2).max(100).optional(),
    seed: z.number().int().default(1),
    connections: z.number().int().min(1).max(10_000).default(256),
    maxInFlight: z.number().int().min(1).max(1_000_000).default(10_000),
  })
  .superRefine((l, ctx) => {
    const need = (
      field: 'startRps' | 'stepRps' | 'stepEvery' | 'spikeRps' | 'spikeAt' | 'spikeFor' | 'steps'
    ): void => {
      if (l[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required for the ${l.profile} profile` });
    };
    if (l.profile === 'ramp') need('startRps');
    if (l.profile === 'sweep') {
      need('startRps');
      need('steps');
      if (l.startRps !== undefined && l.startRps >= l.rps)
        ctx.addIssue({ code: 'custom', path: ['startRps'], message: `must be below rps (${l.rps}) for a sweep` });
    }
    if (l.profile === 'step') {
      need('startRps');
      need('stepRps');
      need('stepEvery');
    }
    if (l.profile === 'spike') {
      need('spikeRps');
      need('spikeAt');
      need('spikeFor');
      if (l.spikeAt !== undefined && l.spikeAt >= l.duration)
        ctx.addIssue({
          code: 'custom',
          path: ['spikeAt'],
          message: `the spike (at ${l.spikeAt} s) must start inside the run (${l.duration} s)`,
        });
    }
  });
export type ScenarioLoad = z.infer<typeof ScenarioLoad>;

/** Goodput SLOs: a request is good when it meets all of them. */
export const ScenarioSlo = z.strictObject({
  ttftMs: z.number().positive().optional(),
  e2eMs: z.number().positive().optional(),
  tpotMs: z.number().positive().optional(),
});

/**
 * One step of the fault schedule, `at` seconds into the run: through the chain's fault API (`via: chain`, the default)
 * or as a Chaos Mesh resource on a real cluster (`via: chaos-mesh`, the scenario's `chaosMesh` says where).
 */
export const ScenarioFault = z.strictObject({
  at: Duration,
  via: FaultVia.default('chain'),
  target: FaultTarget,
  kind: ScenarioFaultKind,
  /** How long it lasts (the fault API's durationS); absent: until the run ends. */
  for: Duration.refine((s) => s > 0 && s <= 3600, 'must be > 0 and ≤ 1h').optional(),
  magnitude: z.number().optional(),
  pod: z.string().min(1).optional(),
});
export type ScenarioFault = z.infer<typeof ScenarioFault>;

export const SCENARIO_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export const Scenario = z
  .strictObject({
    /** Defaults to the file name without its extension. */
    name: z
      .string()
      .regex(SCENARIO_NAME_RE, 'a scenario name is 1–128 letters, digits, _ . : - (starting with a letter or digit)')
      .optional(),
    description: z.string().optional(),
    target: ScenarioTarget.prefault({}),
    /** Model → weight. */
    models: z
      .record(z.string().min(1), weight)
      .refine(
        (m) => Object.keys(m).length > 0 && Object.values(m).some((w) => w > 0),
        'at least one model needs a weight > 0'
      )
      .default({ 'hopscope-llama-8b-v1': 1, 'hopscope-llama-8b-v2': 1 }),
    routes: RouteMix.prefault({ rag: 0.9, agent: 0.1 }),
    prompts: ScenarioPrompts.prefault({ kind: 'synth' }),
    request: ScenarioRequest.prefault({}),
    load: ScenarioLoad.prefault({}),
    slo: ScenarioSlo.default({}),
    thresholds: z.array(ThresholdText).default([]),
    /** The CI gate against a baseline run (`--baseline-run`), e.g. `p99_ms:+10%,error_rate:+0.01`. */
    maxRegression: MaxRegressionText.optional(),
    faults: z.array(ScenarioFault).default([]),
    /** The cluster for `via: chaos-mesh` faults: namespace and a label selector per hop. */
    chaosMesh: ChaosMeshTarget.optional(),
    /** What to look for in this run; printed under the table. */
    notes: z.array(z.string()).default([]),
  })
  .superRefine((s, ctx) => {
    s.faults.forEach((f, i) => {
      if (f.at >= s.load.duration)
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'at'],
          message: `at ${f.at} s is not inside the run (duration ${s.load.duration} s)`,
        });
      if (f.via === 'chain' && ClusterFaultKind.safeParse(f.kind).success)
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'kind'],
          message: `${f.kind} needs a cluster (via: chaos-mesh, PodChaos): the simulated chain has no pods to kill; on the chain use error or timeout`,
        });
      if (f.via === 'chaos-mesh' && !s.chaosMesh)
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'via'],
          message: "via: chaos-mesh needs the scenario's chaosMesh: {namespace, hops: {<hop>: {labels: {...}}}}",
        });
      else if (f.via === 'chaos-mesh' && !s.chaosMesh?.hops[f.target])
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'target'],
          message: `no chaosMesh.hops.${f.target}: give the label selector of its pods`,
        });
    });
  });
export type Scenario = z.infer<typeof Scenario>;
/** What a scenario file holds before defaults (for writing one). */
export type ScenarioInput = z.input<typeof Scenario>;

export const ChatMessage = z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });

/**
 * One line of a JSONL prompt dataset: a conversation (`messages`) or a single user `prompt`; optionally the route and
 * model it must take (else the scenario's mixes decide) and what a correct answer looks like (graded into
 * `summary.quality`: RAG recall against `expected.documents`, agent task completion against `expected.task`).
 */
export const PromptLine = z
  .strictObject({
    id: z.string().optional(),
    messages: z.array(ChatMessage).min(1).optional(),
    prompt: z.string().min(1).optional(),
    route: z.enum(['chat', 'rag', 'agent']).optional(),
    model: z.string().min(1).optional(),
    expected: z
      .strictObject({ documents: z.array(z.string().min(1)).optional(), task: z.literal('completed').optional() })
      .optional(),
  })
  .refine(
    (l) => (l.messages === undefined) !== (l.prompt === undefined),
    'a line has either messages or prompt (exactly one)'
  )
  .refine((l) => !l.messages?.length || l.messages[l.messages.length - 1].role === 'user', {
    message: "the last message must be the user's",
    path: ['messages'],
  });
export type PromptLine = z.infer<typeof PromptLine>;
