/**
 * The answer's first line: one sentence a person can act on, from the top candidate's strongest evidence. Inside an
 * inference server it names the phase and the engine's state ("llm-vllm-1 saturated: queued 2.8 s (usually 40 ms)
 * behind 37 waiting requests, KV cache 98 %, 12 preemptions/min"; "long prompt: prefill 1.9 s for 7,900 prompt tokens
 * (usually 600)"); elsewhere it is the top evidence's own sentence, prefixed with the hop.
 */
import type { Candidate, EngineState, Evidence } from '../../../contract';
import { fmtCount, fmtDur, fmtPct } from './format';

/** A prompt this much above the usual is a long prompt, not a slow engine. */
const LONG_PROMPT = 1.5;

const numOf = (e: Evidence, k: string): number | undefined => (typeof e[k] === 'number' ? (e[k] as number) : undefined);

/** A window's evidence carries its worst trace's evidence as `worst`; a trace's is its own. */
const figuresOf = (e: Evidence): Evidence =>
  typeof e.worst === 'object' && e.worst !== null ? (e.worst as Evidence) : e;

const inTraces = (e: Evidence, total?: number): string =>
  typeof e.traces === 'number' && total ? ` in ${e.traces} of ${total} traces` : '';

const usual = (e: Evidence): string => {
  const b = numOf(e, 'baselineMs');
  return b !== undefined ? ` (usually ${fmtDur(b)})` : '';
};

/** Order of preference when the top candidate shows several kinds: failures first, then the engine's phases. */
const ORDER = [
  'nccl_timeout',
  'error',
  'timeout',
  'gpu_memory_leak',
  'gpu_oom',
  'model_fallback',
  'llm_queue',
  'llm_prefill',
  'llm_decode',
];

export function verdictOf(candidates: Candidate[], windowTraces?: number): string | undefined {
  const top = candidates[0];
  if (!top) return undefined;
  const ev = top.evidence;
  const byKind = (k: string): Evidence | undefined => ev.find((e) => e.kind === k);
  const first = ORDER.map(byKind).find((e) => e !== undefined);
  const where = top.pod && top.pod !== top.service ? top.pod : top.service;
  // It names the pod itself, and explains the out-of-memory or the queueing it led to.
  if (first?.kind === 'gpu_memory_leak') return `${figuresOf(first).summary}${inTraces(first, windowTraces)}`;
  if (first?.kind === 'llm_queue') {
    const e = figuresOf(first);
    const st = e.engineState as EngineState | undefined;
    const parts: string[] = [];
    const waiting = numOf(e, 'waiting') ?? st?.waiting;
    const kv = numOf(e, 'kvCacheUsage') ?? st?.kvCacheUsage;
    const pre = st?.preemptionsPerMin ?? numOf(figuresOf(byKind('llm_preemption') ?? e), 'preemptionsPerMin');
    const v = numOf(e, 'valueMs');
    let s = `${where} saturated${inTraces(first, windowTraces)}: queued ${v !== undefined ? fmtDur(v) : '?'}${usual(e)}`;
    if (waiting !== undefined) s += ` behind ${fmtCount(waiting)} waiting requests`;
    if (kv !== undefined) parts.push(`KV cache ${fmtPct(kv)}`);
    if (pre !== undefined && pre > 0) parts.push(`${pre >= 10 ? Math.round(pre) : pre.toFixed(1)} preemptions/min`);
    if (!st && waiting === undefined) parts.push("the engine's queue metrics were not found");
    return parts.length ? `${s}, ${parts.join(', ')}` : s;
  }
  if (first?.kind === 'llm_prefill') {
    const e = figuresOf(first);
    const v = numOf(e, 'valueMs');
    const tok = numOf(e, 'promptTokens');
    const base = numOf(e, 'baselinePromptTokens');
    const dur = v !== undefined ? fmtDur(v) : '?';
    if (tok !== undefined && base !== undefined && tok >= LONG_PROMPT * base)
      return `long prompt${inTraces(first, windowTraces)} at ${where}: prefill ${dur} for ${fmtCount(tok)} prompt tokens (usually ${fmtCount(base)})`;
    const tokens = tok !== undefined ? ` for ${fmtCount(tok)} prompt tokens` : '';
    const usualTok = base !== undefined ? ` (usually ${fmtCount(base)})` : '';
    return `${where} slow prefill${inTraces(first, windowTraces)}: prefill ${dur}${usual(e)}${tokens}${usualTok}`;
  }
  if (first?.kind === 'llm_decode') {
    const e = figuresOf(first);
    const v = numOf(e, 'valueMs');
    const tok = numOf(e, 'completionTokens');
    const run = numOf(e, 'running');
    return `${where} slow decode${inTraces(first, windowTraces)}: ${v !== undefined ? fmtDur(v) : '?'}${usual(e)}${tok !== undefined ? ` for ${fmtCount(tok)} tokens` : ''}${run !== undefined ? `, ${fmtCount(run)} requests in the batch` : ''}`;
  }
  // Else the strongest: a failure's origin, or the largest excess, or the first evidence.
  let best = first;
  if (!best) {
    let most = -Infinity;
    for (const e of ev) {
      const x = numOf(e, 'excessMs') ?? numOf(e, 'medianExcessMs') ?? -1;
      if (x > most) {
        most = x;
        best = e;
      }
    }
  }
  best ??= ev[0];
  return best ? `${where}: ${best.summary}` : undefined;
}
