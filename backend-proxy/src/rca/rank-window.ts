/**
 * Root cause of an incident window: every trace analysed as in `rankTrace`, the per-hop anomaly accounts summed
 * over the window (excess time, error origins, kernel events, propagation breaks), and traces that continue other
 * traces (split by a hop that restarted the context) reported. Pure and deterministic apart from `tookMs`.
 */
import {
  EVIDENCE_KINDS,
  type Evidence,
  type EvidenceKind,
  type KernelEvent,
  type LlmPhases,
  type RcaAnswer,
  type Span,
  podOrServiceOfSpan,
} from '../../../contract';
import {
  engineStateOfTable,
  type EngineStateLookup,
  type EngineStateTable,
  type HopAccount,
  hopKey,
  newHop,
} from './account';
import { analyzeTrace } from './analyze';
import { fmtMs } from './format';
import { buildBaseline } from './background';
import { type Baseline, baselineStats, groupByTrace } from './baseline';
import { type RcaConfigInput, resolveConfig } from './config';
import { indexKernelEvents } from './kernel';
import { rankScored, scoreHop } from './score';
import { phaseExcess } from './passes/llm-phases';
import { verdictOf } from './verdict';

/** The inference server spans a window answer shows: the few whose phases rose most above their baselines. */
const WINDOW_LLM_SPANS = 5;

export interface RankWindowInput {
  /** Traces as span lists, or all spans mixed (grouped by trace id here). */
  traces: Span[][] | Span[];
  /** A baseline, or healthy spans to build one from; absent: the window is compared with its own medians. */
  baseline?: Baseline | Span[] | Span[][];
  kernelEvents?: KernelEvent[];
  config?: RcaConfigInput;
  /** The inference engines' state by pod and instant (from their metrics, read by the caller), for the LLM phases. */
  engineState?: EngineStateLookup;
  /** The same as data (what the proxy hands its worker threads); used when `engineState` is absent. */
  engineStates?: EngineStateTable;
}

export type WindowRcaAnswer = RcaAnswer & {
  window: { traces: number; spans: number; fromMs?: number; toMs?: number; anomalousTraces: number };
};

const isBaseline = (b: unknown): b is Baseline =>
  typeof b === 'object' && b !== null && !Array.isArray(b) && (b as Baseline).version === 1;

interface WindowHop {
  acc: HopAccount;
  traces: number;
  kinds: Map<
    EvidenceKind,
    {
      traces: Set<string>;
      excess: number[];
      example?: { traceId: string; spanId?: string };
      /** The engine-phase evidence of the trace where it was worst (its figures: the verdict reads them). */
      worst?: Evidence;
    }
  >;
}

export function rankWindow(input: RankWindowInput): WindowRcaAnswer {
  const t0 = performance.now();
  const config = resolveConfig(input.config);
  const traces =
    input.traces.length && Array.isArray(input.traces[0])
      ? (input.traces as Span[][])
      : groupByTrace(input.traces as Span[]);
  const missing: string[] = [];
  let baseline: Baseline;
  if (isBaseline(input.baseline)) baseline = input.baseline;
  else if (input.baseline && input.baseline.length) baseline = buildBaseline(input.baseline, input.config);
  else {
    // Statistics only: a chronic level measured on the incident itself would cancel the incident.
    baseline = baselineStats(traces);
    missing.push(
      'baseline: none given, so the window is compared with its own medians (a fault present in most traces hides itself)'
    );
  }
  const kernel = input.kernelEvents?.length ? indexKernelEvents(input.kernelEvents) : undefined;
  if (!kernel) missing.push('kernel events: none given, no kernel evidence joined');

  const hops = new Map<string, WindowHop>();
  let totalMs = 0;
  let spanCount = 0;
  let anomalous = 0;
  let fromMs = Infinity;
  let toMs = -Infinity;
  const missingCounts = new Map<string, number>();
  let llm: Array<{ lp: LlmPhases; x: number }> = [];
  const engineState = input.engineState ?? (input.engineStates && engineStateOfTable(input.engineStates));
  for (const tr of traces) {
    if (!tr.length) continue;
    spanCount += tr.length;
    const a = analyzeTrace(tr, { baseline, kernel, config, engineState });
    for (const lp of a.llm) llm.push({ lp, x: phaseExcess(lp) });
    if (llm.length > 4 * WINDOW_LLM_SPANS) llm = topLlm(llm);
    totalMs += a.anchorDurationMs;
    fromMs = Math.min(fromMs, a.tree.cStart[a.anchor]);
    toMs = Math.max(toMs, a.tree.cEnd[a.anchor]);
    let any = false;
    for (const [k, h] of a.hops) {
      let w = hops.get(k);
      if (!w) {
        w = { acc: newHop(h.service, h.pod), traces: 0, kinds: new Map() };
        hops.set(k, w);
      }
      const acc = w.acc;
      acc.weightedExcessMs += h.weightedExcessMs;
      acc.selfMs += h.selfMs;
      acc.baselineMs += h.baselineMs;
      acc.hasBaseline &&= h.hasBaseline;
      acc.onPathMs += h.onPathMs;
      acc.errorScore += h.errorScore;
      acc.degradation += h.degradation;
      acc.propagationBreaks += h.propagationBreaks;
      for (const [e, how] of h.kernel) if (acc.kernel.get(e) !== 'trace') acc.kernel.set(e, how);
      if (h.bestExcessMs > acc.bestExcessMs && h.spanId) {
        acc.bestExcessMs = h.bestExcessMs;
        acc.spanId = h.spanId;
        acc.operation = h.operation;
      } else if (!acc.operation && h.operation) acc.operation = h.operation;
      if (h.evidence.length) {
        w.traces++;
        any ||= h.evidence.some((e) => e.kind !== 'broken_propagation' && e.kind !== 'inferred_call');
      }
      for (const ev of h.evidence) {
        let g = w.kinds.get(ev.kind);
        if (!g) w.kinds.set(ev.kind, (g = { traces: new Set(), excess: [] }));
        g.traces.add(a.traceId ?? '');
        if (typeof ev.excessMs === 'number') g.excess.push(ev.excessMs);
        if (ev.kind.startsWith('llm_') && (!g.worst || (Number(ev.excessMs) || 0) > (Number(g.worst.excessMs) || 0)))
          g.worst = ev;
        g.example ??= { traceId: a.traceId ?? '', spanId: typeof ev.spanId === 'string' ? ev.spanId : undefined };
      }
    }
    if (any) anomalous++;
    for (const m of a.missing)
      if (!m.startsWith('baseline for'))
        missingCounts.set(
          m.replace(/[0-9a-f]{16}/g, '…'),
          (missingCounts.get(m.replace(/[0-9a-f]{16}/g, '…')) ?? 0) + 1
        );
  }

  // Split traces: a trace whose orphan names a parent span that lives in another trace of the window.
  const owner = new Map<string, string>();
  for (const tr of traces) for (const s of tr) owner.set(s.spanId, s.traceId);
  const splits = new Map<string, number>();
  for (const tr of traces) {
    const ids = new Set(tr.map((s) => s.spanId));
    for (const s of tr) {
      if (!s.parentSpanId || ids.has(s.parentSpanId)) continue;
      const other = owner.get(s.parentSpanId);
      if (other && other !== s.traceId) {
        const k = hopKey(s.service, podOrServiceOfSpan(s));
        splits.set(k, (splits.get(k) ?? 0) + 1);
        const w = hops.get(k);
        if (w) w.acc.propagationBreaks++;
      }
    }
  }
  for (const k of [...splits.keys()].sort()) {
    const [service] = k.split('\u001f');
    missing.push(
      `one trace per request: ${splits.get(k)} trace(s) restart at ${service}, whose parent span is in another trace (the trace id was not propagated into ${service})`
    );
  }
  // Most frequent first, bounded: a window of broken traces must not answer with a novel.
  const counted = [...missingCounts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [m, k] of counted.slice(0, 40)) missing.push(`${m} (in ${k} trace${k === 1 ? '' : 's'})`);
  if (counted.length > 40) missing.push(`… and ${counted.length - 40} other kinds of gaps`);
  const nTraces = traces.length || 1;

  // Calls that no span answered are booked on pod "unknown"; when the window shows one pod for that service, it is that pod.
  const podsOf = new Map<string, string[]>();
  for (const w of hops.values()) {
    if (w.acc.pod === 'unknown') continue;
    const l = podsOf.get(w.acc.service);
    if (l) l.push(w.acc.pod);
    else podsOf.set(w.acc.service, [w.acc.pod]);
  }
  for (const [k, w] of [...hops]) {
    const only = podsOf.get(w.acc.service);
    if (w.acc.pod !== 'unknown' || !only || only.length !== 1) continue;
    const into = hops.get(hopKey(w.acc.service, only[0]))!;
    const a = into.acc;
    const b = w.acc;
    a.weightedExcessMs += b.weightedExcessMs;
    a.selfMs += b.selfMs;
    a.baselineMs += b.baselineMs;
    a.onPathMs += b.onPathMs;
    a.errorScore += b.errorScore;
    a.degradation += b.degradation;
    a.propagationBreaks += b.propagationBreaks;
    for (const [e, how] of b.kernel) if (a.kernel.get(e) !== 'trace') a.kernel.set(e, how);
    into.traces += w.traces;
    for (const [kind, g] of w.kinds) {
      const t = into.kinds.get(kind);
      if (!t) into.kinds.set(kind, g);
      else {
        for (const x of g.traces) t.traces.add(x);
        // A loop, not push(...spread): a big window's array would overflow the argument stack.
        for (const x of g.excess) t.excess.push(x);
      }
    }
    hops.delete(k);
  }

  const scored = [...hops.values()].map((w) => {
    const evidence: Evidence[] = [];
    for (const kind of [...w.kinds.keys()].sort()) {
      const g = w.kinds.get(kind)!;
      const n = g.traces.size;
      const ex = Float64Array.from(g.excess).sort();
      const med = ex.length ? ex[Math.floor(ex.length / 2)] : undefined;
      const share = `${n} of ${traces.length} traces (${((100 * n) / nTraces).toFixed(0)}%)`;
      evidence.push({
        kind,
        summary: `${EVIDENCE_KINDS[kind].description} in ${share}${med !== undefined ? `, median excess ${fmtMs(med)}` : ''}; e.g. trace ${g.example?.traceId}${g.example?.spanId ? ` span ${g.example.spanId}` : ''}`,
        traces: n,
        ...(med !== undefined ? { medianExcessMs: med } : {}),
        ...(g.example ? { exampleTraceId: g.example.traceId } : {}),
        ...(g.worst ? { worst: g.worst } : {}),
      });
    }
    // What healthy traffic already shows at this service is chronic, not this incident's cause.
    const bg = baseline.background?.[w.acc.service];
    const weightedExcessMs = bg
      ? Math.max(0, w.acc.weightedExcessMs - bg.latencyShare * totalMs)
      : w.acc.weightedExcessMs;
    if (bg && bg.latencyShare >= 0.005) {
      evidence.push({
        kind: 'chronic',
        summary: `healthy traffic already shows ${(bg.latencyShare * 100).toFixed(1)}% of end-to-end time as excess at ${w.acc.service}; discounted`,
      });
    }
    const errorScore = bg ? Math.max(0, w.acc.errorScore - bg.errorShare * nTraces) : w.acc.errorScore;
    const h: HopAccount = { ...w.acc, weightedExcessMs, errorScore, evidence };
    return scoreHop(h, totalMs, kernel?.events, config, {
      error: errorScore / nTraces,
      degradation: w.acc.degradation / nTraces,
      propagation: (0.2 * w.acc.propagationBreaks) / nTraces,
      traces: nTraces,
    });
  });
  if (llm.length && !engineState)
    missing.push(
      'engine state: none given, so the LLM phases name no queue depth, KV-cache usage or preemptions (the proxy reads them from Prometheus for GET /api/traces/:id/rca and GET /api/rca)'
    );
  const candidates = rankScored(scored, config);
  const verdict = verdictOf(candidates, traces.length);
  const llmPhases = topLlm(llm).map((x) => x.lp);
  return {
    tookMs: performance.now() - t0,
    criticalPath: [],
    candidates,
    missing,
    ...(verdict ? { verdict } : {}),
    ...(llmPhases.length ? { llmPhases } : {}),
    window: {
      traces: traces.length,
      spans: spanCount,
      ...(Number.isFinite(fromMs) ? { fromMs, toMs } : {}),
      anomalousTraces: anomalous,
    },
  };
}

/** The window's worst inference server spans (largest phase excess, then longest; span id breaks ties). */
function topLlm(l: Array<{ lp: LlmPhases; x: number }>): Array<{ lp: LlmPhases; x: number }> {
  return l
    .sort((a, b) => b.x - a.x || b.lp.durationMs - a.lp.durationMs || a.lp.spanId.localeCompare(b.lp.spanId))
    .slice(0, WINDOW_LLM_SPANS);
}
