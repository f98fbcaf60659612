/**
 * LLM phases: an on-path inference server span (vLLM `llm_request`, SGLang's request span, TGI's router span; `llmPhasesOf` of contract/engines) is
 * split into the phases the engine timed, each compared with that operation's healthy phase (`Baseline.ops[…].phases`,
 * median/MAD, the excess rule of the baseline-excess pass). Each phase above its baseline is evidence on the server's hop: `llm_queue`
 * (with the engine's waiting/running requests and KV-cache usage on that pod then, when the caller gave its state),
 * `llm_prefill` (prompt tokens against the usual), `llm_decode` (TGI: `inference`, which it does not split), and
 * `llm_preemption` when the engine preempted requests meanwhile. The phases say where the span's own time went; only
 * what they show beyond the excess the baseline-excess pass already counted is added to the hop's latency.
 */
import { type EngineState, type Evidence, type LlmPhase, type LlmPhases, llmPhasesOf } from '../../../../contract';
import { type HopAccount, type TraceAccount, hopOfSpan, opAt } from '../account';
import { fmtCount, fmtDur, fmtPct, round } from '../format';
import { robustZ } from '../stats';

/** Fewer healthy samples than this and a phase is not compared (one cold start would set the bar). */
const MIN_PHASE_SAMPLES = 5;
/** The inference spans a trace's answer shows (an agent's trace may call the LLM thousands of times). */
export const LLM_PER_TRACE = 50;

/** How far a span's phases rose above their baselines in all (ms). */
export const phaseExcess = (lp: LlmPhases): number => {
  let x = 0;
  for (const p of lp.phases) if (p.baselineMs !== undefined) x += Math.max(0, p.durationMs - p.baselineMs);
  return x;
};

export function llmPhases(a: TraceAccount): void {
  const { spans, config: c } = a;
  let noBaseline: string | undefined;
  const notes = new Map<
    HopAccount,
    Map<LlmPhase['name'], { lp: LlmPhases; ex: number; state?: EngineState; count: number; total: number }>
  >();
  const preempted = new Map<HopAccount, { lp: LlmPhases; state: EngineState }>();
  // The path's spans, then the anchor's ancestors: a breach framed inside an engine's span (SGLang's prefill_waiting
  // slice under its request span) leaves that span off the path, yet its phases say what the slice was.
  // (The path runs from the anchor down: its ancestors are never on it.)
  const ancestors: number[] = [];
  for (let p = a.tree.parent[a.anchor]; p !== undefined && p >= 0; p = a.tree.parent[p]) ancestors.push(p);
  for (const i of ancestors.length ? [...a.path, ...ancestors] : a.path) {
    const s = spans[i];
    if (s.kind === 'client') continue;
    const read = llmPhasesOf(s, spans);
    if (!read) continue;
    // A fresh object of the reader's: the phases gain their baselines in place (no copy per span).
    const lp = read as LlmPhases;
    const b = opAt(a, i);
    let excess: Map<LlmPhase['name'], number> | undefined;
    let queueMs = 0;
    for (const p of lp.phases) {
      if (p.name === 'queue') queueMs = p.durationMs;
      const st = b?.phases?.[p.name];
      if (!st || st.count < MIN_PHASE_SAMPLES) continue;
      p.baselineMs = round(st.median);
      if (robustZ(p.durationMs, st, c.madFloorRatio) >= c.zThreshold && p.durationMs - st.median >= c.minExcessMs)
        (excess ??= new Map()).set(p.name, p.durationMs - st.median);
    }
    if (!b?.phases) noBaseline ??= `${s.service} "${s.name}"`;
    if (b?.promptTokens && b.promptTokens.count >= MIN_PHASE_SAMPLES)
      lp.baselinePromptTokens = round(b.promptTokens.median);
    // The engine's state for the spans the answer shows: those with an excess, and the first ones of the path.
    const state =
      excess || a.llm.length < LLM_PER_TRACE
        ? a.engineState?.(lp.service, lp.pod, lp.startMs + queueMs / 2)
        : undefined;
    if (state) lp.engineState = state;
    a.llm.push(lp);
    if (!excess) continue;

    const h = hopOfSpan(a, i);
    let total = 0;
    for (const v of excess.values()) total += v;
    // The baseline-excess pass counted the span's own time above its baseline; the phases may show more (a queue that the span's own
    // spread hides) but never more than the span spent on the critical path.
    const extra = Math.max(0, Math.min(total, a.onPathMs[i] || 0) - (a.excessMs[i] || 0));
    h.weightedExcessMs += extra;
    if (total > h.bestExcessMs) {
      h.bestExcessMs = total;
      h.spanId = s.spanId;
      h.operation = s.name;
    }
    // The worst span per hop and phase is spelled out, with a count of the others (an agent's trace may call the
    // engine thousands of times: no sentence per call).
    let byPhase = notes.get(h);
    if (!byPhase) notes.set(h, (byPhase = new Map()));
    for (const [name, ex] of excess) {
      const prev = byPhase.get(name);
      if (!prev) byPhase.set(name, { lp, ex, state, count: 1, total: ex });
      else {
        prev.count++;
        prev.total += ex;
        if (ex > prev.ex) Object.assign(prev, { lp, ex, state });
      }
    }
    const pre = state?.preemptionsPerMin;
    if (pre !== undefined && pre > 0 && (excess.has('queue') || excess.has('decode') || excess.has('inference'))) {
      const prev = preempted.get(h);
      if (!prev || pre > (prev.state.preemptionsPerMin ?? 0)) preempted.set(h, { lp, state: state! });
    }
  }
  for (const [h, byPhase] of notes)
    for (const [name, n] of byPhase) {
      const ev = phaseEvidence(n.lp, name, n.ex, n.state);
      if (n.count > 1) {
        ev.summary += `; the worst of ${n.count} such calls, ${fmtDur(n.total)} above baseline in all`;
        ev.spans = n.count;
        ev.totalExcessMs = round(n.total);
      }
      h.evidence.push(ev);
    }
  for (const [h, { lp, state }] of preempted)
    h.evidence.push({
      kind: 'llm_preemption',
      summary: `${lp.pod}: ${fmtRate(state.preemptionsPerMin!)} preemptions/min around this request (the KV cache was full: running requests were evicted and recomputed)${provenanceOf(state, 'preemptionsPerMin')}`,
      spanId: lp.spanId,
      preemptionsPerMin: round(state.preemptionsPerMin!),
      engineState: state,
    });
  if (noBaseline)
    a.missing.push(
      `baseline of the LLM engine's phases for ${noBaseline}: no healthy spans of that operation, phases shown without comparison`
    );
}

const fmtRate = (x: number): string => (x >= 10 ? String(Math.round(x)) : x.toFixed(1).replace(/\.0$/, ''));

/** " (vllm:num_requests_waiting at 12:00:03Z, scraped every 15 s)" for the figures this evidence names. */
function provenanceOf(state: EngineState | undefined, ...figures: string[]): string {
  if (!state) return '';
  const used = state.provenance.filter((p) => figures.includes(p.figure));
  if (!used.length) return '';
  const at = new Date(used[0].instantMs).toISOString().slice(11, 19);
  const every = used[0].scrapeIntervalS ? `, scraped every ${used[0].scrapeIntervalS} s` : '';
  return ` (${used.map((p) => p.metric).join(', ')} at ${at}Z${every})`;
}

function phaseEvidence(lp: LlmPhases, name: LlmPhase['name'], ex: number, state?: EngineState): Evidence {
  const p = lp.phases.find((x) => x.name === name)!;
  const usual = p.baselineMs !== undefined ? ` (usually ${fmtDur(p.baselineMs)})` : '';
  const figures = { spanId: lp.spanId, valueMs: p.durationMs, baselineMs: p.baselineMs, excessMs: round(ex) };
  if (name === 'queue') {
    const parts: string[] = [];
    if (state?.waiting !== undefined) parts.push(`behind ${fmtCount(state.waiting)} waiting requests`);
    if (state?.running !== undefined) parts.push(`${fmtCount(state.running)} running`);
    if (state?.kvCacheUsage !== undefined) parts.push(`KV cache ${fmtPct(state.kvCacheUsage)}`);
    const why = parts.length ? `: ${parts.join(', ')}` : '';
    return {
      kind: 'llm_queue',
      summary: `${lp.pod}: queued ${fmtDur(p.durationMs)}${usual} in the ${lp.engine} engine before being scheduled${why}${provenanceOf(state, 'waiting', 'running', 'kvCacheUsage')}`,
      ...figures,
      ...(state?.waiting !== undefined ? { waiting: state.waiting } : {}),
      ...(state?.running !== undefined ? { running: state.running } : {}),
      ...(state?.kvCacheUsage !== undefined ? { kvCacheUsage: state.kvCacheUsage } : {}),
      ...(state ? { engineState: state } : {}),
    };
  }
  if (name === 'prefill') {
    const tok =
      lp.promptTokens !== undefined
        ? ` for ${fmtCount(lp.promptTokens)} prompt tokens${lp.baselinePromptTokens !== undefined ? ` (usually ${fmtCount(lp.baselinePromptTokens)})` : ''}`
        : '';
    const hit =
      state?.prefixCacheHitRate !== undefined
        ? `; prefix-cache hit rate ${fmtPct(state.prefixCacheHitRate)}${provenanceOf(state, 'prefixCacheHitRate')}`
        : '';
    return {
      kind: 'llm_prefill',
      summary: `${lp.pod}: prefill ${fmtDur(p.durationMs)}${usual}${tok}${hit}`,
      ...figures,
      ...(lp.promptTokens !== undefined ? { promptTokens: lp.promptTokens } : {}),
      ...(lp.baselinePromptTokens !== undefined ? { baselinePromptTokens: lp.baselinePromptTokens } : {}),
      ...(state?.prefixCacheHitRate !== undefined ? { prefixCacheHitRate: state.prefixCacheHitRate } : {}),
    };
  }
  // decode (vLLM, SGLang), or TGI's inference (prefill and decode together: its router does not split them)
  const what = name === 'inference' ? 'inference (prefill and decode, which TGI does not split)' : 'decode';
  const perTok =
    lp.completionTokens && lp.completionTokens > 0
      ? ` for ${fmtCount(lp.completionTokens)} tokens (${fmtDur(p.durationMs / lp.completionTokens)} per token)`
      : '';
  const batch = state?.running !== undefined ? `; ${fmtCount(state.running)} requests in the running batch` : '';
  return {
    kind: 'llm_decode',
    summary: `${lp.pod}: ${what} ${fmtDur(p.durationMs)}${usual}${perTok}${batch}${provenanceOf(state, 'running')}`,
    ...figures,
    ...(lp.completionTokens !== undefined ? { completionTokens: lp.completionTokens } : {}),
    ...(state?.running !== undefined ? { running: state.running } : {}),
  };
}
