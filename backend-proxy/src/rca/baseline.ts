/**
 * The healthy baseline: per (service, span kind, operation), robust statistics of exclusive time, duration and — for
 * client spans — the client→server gap, plus the error rate. A plain JSON object, so it can be cached and shipped.
 */
import { isFailedSpan, kvCacheHitRateOfSpan, type LlmPhase, llmPhasesOf, type Span } from '../../../contract';
import { type RobustStats, robustStats } from './stats';
import { buildTree } from './tree';

export interface OperationBaseline {
  service: string;
  kind: Span['kind'];
  operation: string;
  self: RobustStats;
  duration: RobustStats;
  gap?: RobustStats;
  /** LLM spans: KV/prefix-cache hit rate (0…1) of healthy calls, when the spans report it. */
  kvHit?: RobustStats;
  /** Inference server spans: each phase the engine timed (queue, prefill, decode; TGI: validation, queue, inference), ms. */
  phases?: Partial<Record<LlmPhase['name'], RobustStats>>;
  /** Inference server spans: prompt tokens of healthy calls. */
  promptTokens?: RobustStats;
  errorRate: number;
}

export interface Baseline {
  version: 1;
  traces: number;
  spans: number;
  ops: Record<string, OperationBaseline>;
  /**
   * Chronic anomaly per service in the healthy traffic itself (share of end-to-end time flagged as excess, error
   * origins per trace): what a window shows at this level is not news. Filled by `buildBaseline`.
   */
  background?: Record<string, { latencyShare: number; errorShare: number }>;
}

const opKey = (s: Pick<Span, 'service' | 'kind' | 'name'>): string => `${s.service}\u001f${s.kind}\u001f${s.name}`;

export function groupByTrace(spans: Span[]): Span[][] {
  const m = new Map<string, Span[]>();
  for (const s of spans) {
    let g = m.get(s.traceId);
    if (!g) m.set(s.traceId, (g = []));
    g.push(s);
  }
  return [...m.values()];
}

/** One trace's contribution to the statistics of each operation it contains (exclusive time, duration, gap, ...). */
export interface OpSamples {
  service: string;
  kind: Span['kind'];
  operation: string;
  self: number[];
  dur: number[];
  gap: number[];
  kv: number[];
  /** Inference server spans: ms per phase name, and prompt tokens (absent when none of them is one). */
  phases?: Map<LlmPhase['name'], number[]>;
  prompt?: number[];
  errors: number;
}

/**
 * The per-operation samples of one whole trace, by `opKey`. Depends on nothing but the trace, so a store can compute
 * it once per trace (and again only when spans arrive) and `statsFromSamples` merges many without rebuilding trees.
 */
export interface TraceSamples {
  spans: number;
  ops: Map<string, OpSamples>;
}

export function traceSamples(tr: Span[]): TraceSamples {
  const ops = new Map<string, OpSamples>();
  const t = buildTree(tr);
  // The tree's spans: kind-less spans carry the call roles inferred from the tree, as the analysis sees them.
  const spans = t.spans;
  for (let i = 0; i < spans.length; i++) {
    const s = spans[i];
    const k = opKey(s);
    let a = ops.get(k);
    if (!a)
      ops.set(
        k,
        (a = { service: s.service, kind: s.kind, operation: s.name, self: [], dur: [], gap: [], kv: [], errors: 0 })
      );
    a.self.push(t.self[i]);
    a.dur.push(t.end[i] - t.start[i]);
    if (!Number.isNaN(t.gap[i])) a.gap.push(t.gap[i]);
    const kv = s.kind === 'client' ? undefined : kvCacheHitRateOfSpan(s);
    if (kv !== undefined && Number.isFinite(kv)) a.kv.push(kv);
    const lp = s.kind === 'client' ? undefined : llmPhasesOf(s, spans);
    if (lp) {
      a.phases ??= new Map();
      for (const p of lp.phases) {
        const l = a.phases.get(p.name);
        if (l) l.push(p.durationMs);
        else a.phases.set(p.name, [p.durationMs]);
      }
      if (lp.promptTokens !== undefined) (a.prompt ??= []).push(lp.promptTokens);
    }
    if (isFailedSpan(s)) a.errors++;
  }
  return { spans: tr.length, ops };
}

const concat = (lists: number[][]): number[] => {
  if (lists.length === 1) return lists[0];
  let n = 0;
  for (const l of lists) n += l.length;
  const out = new Array<number>(n);
  let j = 0;
  for (const l of lists) for (let i = 0; i < l.length; i++) out[j++] = l[i];
  return out;
};

/** Merges per-trace samples into the baseline statistics: `baselineStats` of the same traces, exactly. */
export function statsFromSamples(samples: TraceSamples[]): Baseline {
  const acc = new Map<
    string,
    {
      first: OpSamples;
      self: number[][];
      dur: number[][];
      gap: number[][];
      kv: number[][];
      phases?: Map<LlmPhase['name'], number[][]>;
      prompt: number[][];
      errors: number;
      count: number;
    }
  >();
  let count = 0;
  for (const t of samples) {
    count += t.spans;
    for (const [k, o] of t.ops) {
      let a = acc.get(k);
      if (!a) acc.set(k, (a = { first: o, self: [], dur: [], gap: [], kv: [], prompt: [], errors: 0, count: 0 }));
      a.self.push(o.self);
      a.dur.push(o.dur);
      if (o.gap.length) a.gap.push(o.gap);
      if (o.kv.length) a.kv.push(o.kv);
      if (o.phases)
        for (const [name, l] of o.phases) {
          a.phases ??= new Map();
          const into = a.phases.get(name);
          if (into) into.push(l);
          else a.phases.set(name, [l]);
        }
      if (o.prompt?.length) a.prompt.push(o.prompt);
      a.errors += o.errors;
      a.count += o.dur.length;
    }
  }
  const ops: Record<string, OperationBaseline> = {};
  for (const k of [...acc.keys()].sort()) {
    const a = acc.get(k)!;
    ops[k] = {
      service: a.first.service,
      kind: a.first.kind,
      operation: a.first.operation,
      self: robustStats(concat(a.self)),
      duration: robustStats(concat(a.dur)),
      ...(a.gap.length ? { gap: robustStats(concat(a.gap)) } : {}),
      ...(a.kv.length ? { kvHit: robustStats(concat(a.kv)) } : {}),
      ...(a.phases
        ? {
            phases: Object.fromEntries(
              [...a.phases].sort(([x], [y]) => x.localeCompare(y)).map(([n, l]) => [n, robustStats(concat(l))])
            ),
          }
        : {}),
      ...(a.prompt.length ? { promptTokens: robustStats(concat(a.prompt)) } : {}),
      errorRate: a.errors / a.count,
    };
  }
  return { version: 1, traces: samples.length, spans: count, ops };
}

/** Statistics only (see `buildBaseline` in ./background for the full baseline). */
export function baselineStats(spans: Span[] | Span[][]): Baseline {
  const traces = spans.length && Array.isArray(spans[0]) ? (spans as Span[][]) : groupByTrace(spans as Span[]);
  return statsFromSamples(traces.map(traceSamples));
}
