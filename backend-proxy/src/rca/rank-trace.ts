/** Root cause of one trace: pure, deterministic (apart from `tookMs`), no I/O. */
import type { KernelEvent, LlmPhases, RcaAnswer, Span } from '../../../contract';
import { engineStateOfTable, type EngineStateLookup, type EngineStateTable } from './account';
import { analyzeTrace } from './analyze';
import { type Baseline, baselineStats } from './baseline';
import { type RcaConfigInput, resolveConfig } from './config';
import { type KernelIndex, indexKernelEvents } from './kernel';
import { rankScored, scoreHop } from './score';
import { LLM_PER_TRACE, phaseExcess } from './passes/llm-phases';
import { verdictOf } from './verdict';

export interface RankTraceInput {
  spans: Span[];
  /** A baseline, or healthy spans to compute one from (statistics only: the per-trace answer needs no more). */
  baseline?: Baseline | Span[] | Span[][];
  /** Raw events, or an index built once with `indexKernelEvents` when ranking many traces against the same events. */
  kernelEvents?: KernelEvent[] | KernelIndex;
  config?: RcaConfigInput;
  /** The inference engines' state by pod and instant (from their metrics, read by the caller), for the LLM phases. */
  engineState?: EngineStateLookup;
  /** The same as data (what the proxy hands its worker threads); used when `engineState` is absent. */
  engineStates?: EngineStateTable;
}

export type TraceRcaAnswer = RcaAnswer & { anchor?: { spanId: string; reason: string; durationMs: number } };

const isIndex = (k: KernelEvent[] | KernelIndex): k is KernelIndex => !Array.isArray(k);

export function rankTrace(input: RankTraceInput): TraceRcaAnswer {
  const t0 = performance.now();
  const config = resolveConfig(input.config);
  if (!input.spans.length) {
    return { tookMs: performance.now() - t0, criticalPath: [], candidates: [], missing: ['spans: the trace is empty'] };
  }
  const kernel =
    input.kernelEvents === undefined
      ? undefined
      : isIndex(input.kernelEvents)
        ? input.kernelEvents
        : indexKernelEvents(input.kernelEvents);
  const baseline =
    input.baseline === undefined || (Array.isArray(input.baseline) && !input.baseline.length)
      ? undefined
      : Array.isArray(input.baseline)
        ? baselineStats(input.baseline)
        : input.baseline;
  const engineState = input.engineState ?? (input.engineStates && engineStateOfTable(input.engineStates));
  const a = analyzeTrace(input.spans, { baseline, kernel, config, engineState });
  const missing = [...a.missing];
  if (!baseline)
    missing.unshift('baseline: none given, so self times are compared with nothing (each counted at half weight)');
  if (!kernel) missing.push('kernel events: none given, no kernel evidence joined');
  if (a.llm.length && !engineState)
    missing.push(
      'engine state: none given, so the LLM phases name no queue depth, KV-cache usage or preemptions (the proxy reads them from Prometheus for GET /api/traces/:id/rca and GET /api/rca)'
    );
  const scored = [...a.hops.values()].map((h) => scoreHop(h, a.anchorDurationMs, kernel?.events, config));
  const anchorSpan = a.tree.spans[a.anchor];
  const candidates = rankScored(scored, config);
  const verdict = verdictOf(candidates);
  return {
    traceId: a.traceId,
    tookMs: performance.now() - t0,
    anchor: {
      spanId: anchorSpan.spanId,
      reason: a.anchorReason,
      durationMs: Math.round(a.anchorDurationMs * 1000) / 1000,
    },
    criticalPath: a.criticalPath,
    candidates,
    missing,
    ...(verdict ? { verdict } : {}),
    ...(a.llm.length ? { llmPhases: shownLlm(a.llm, missing) } : {}),
  };
}

/** The path's inference spans, in path order; past LLM_PER_TRACE, those whose phases rose most (and `missing` says so). */
function shownLlm(all: LlmPhases[], missing: string[]): LlmPhases[] {
  if (all.length <= LLM_PER_TRACE) return all;
  missing.push(
    `llmPhases: ${LLM_PER_TRACE} of the ${all.length} inference spans on the critical path, those whose phases rose most above their baselines`
  );
  const keep = new Set(
    all
      .map((lp, k) => ({ k, x: phaseExcess(lp) }))
      .sort((p, q) => q.x - p.x || p.k - q.k)
      .slice(0, LLM_PER_TRACE)
      .map((p) => p.k)
  );
  return all.filter((_, k) => keep.has(k));
}
