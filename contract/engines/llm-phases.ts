/**
 * The phases of an inference server's own request span, read from the span exactly as the engine writes it (vLLM's
 * `llm_request`, SGLang's request root span, TGI's router handler span: ./span-shapes). The engine is decided by
 * the span's shape, never by the service's name. Pure; no baselines or engine state (the root-cause pass adds them).
 */
import type { LlmPhase, LlmPhases } from '../rca';
import { podOrServiceOfSpan } from '../spans';
import type { Span } from '../traces';
import type { EngineName } from './metric-aliases';
import { SGLANG_ROOT_NAME_RE, SGLANG_SPAN, TGI_SPAN, VLLM_SPAN } from './span-shapes';
import { parseTgiDuration } from './tgi-duration';

/** `LlmPhases` as read from the span alone. */
export type LlmPhasesRead = Omit<LlmPhases, 'baselinePromptTokens' | 'engineState' | 'phases'> & {
  phases: Array<Omit<LlmPhase, 'baselineMs'>>;
};

type Attrs = Span['attributes'];

/** A non-negative number of seconds → ms (vLLM and SGLang write floats in seconds). */
const secMs = (a: Attrs, key: string): number | undefined => {
  const v = a[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.max(0, n * 1000) : undefined;
};
const count = (a: Attrs, ...keys: string[]): number | undefined => {
  for (const k of keys) {
    const v = a[k];
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (Number.isFinite(n) && n >= 0) return n;
  }
  return undefined;
};

const V = VLLM_SPAN.attributes;
const S = SGLANG_SPAN.attributes;
const T = TGI_SPAN.fields;

const isTgi = (s: Span): boolean =>
  parseTgiDuration(s.attributes[T.queueTime]) !== undefined &&
  parseTgiDuration(s.attributes[T.inferenceTime]) !== undefined &&
  typeof s.attributes[T.queueTime] === 'string';
const isSglang = (s: Span): boolean =>
  s.attributes[S.module] === SGLANG_SPAN.module || (SGLANG_ROOT_NAME_RE.test(s.name) && S.rid in s.attributes);
const hasLatency = (s: Span): boolean =>
  [V.timeInQueue, V.timeInModelPrefill, V.timeInModelDecode, V.timeToFirstToken].some((k) => k in s.attributes);
const isVllm = (s: Span): boolean => !isSglang(s) && (s.name === VLLM_SPAN.name || V.timeInQueue in s.attributes);

/** Which engine wrote this request span, by its shape (name, attribute set), or undefined for any other span. */
export function engineOfSpan(s: Span): EngineName | undefined {
  if (isTgi(s)) return 'tgi';
  if (isSglang(s) && hasLatency(s)) return 'sglang';
  if (isVllm(s) && hasLatency(s)) return 'vllm';
  return undefined;
}

/** Lays phases end to end from `startMs` (the engines give durations, not instants: queue first, then the rest). */
function laidOut(startMs: number, phases: Array<[LlmPhase['name'], number | undefined]>): LlmPhasesRead['phases'] {
  const out: LlmPhasesRead['phases'] = [];
  let at = startMs;
  for (const [name, ms] of phases) {
    if (ms === undefined) continue;
    out.push({ name, durationMs: ms, startMs: at });
    at += ms;
  }
  return out;
}

const base = (s: Span, engine: EngineName, source: string) => ({
  spanId: s.spanId,
  service: s.service,
  pod: podOrServiceOfSpan(s),
  engine,
  source,
  startMs: s.startMs,
  durationMs: Math.max(0, s.endMs - s.startMs),
});

function vllmPhases(s: Span): LlmPhasesRead {
  const a = s.attributes;
  return {
    ...base(s, 'vllm', `${s.name} / gen_ai.latency.* (s)`),
    phases: laidOut(s.startMs, [
      ['queue', secMs(a, V.timeInQueue)],
      ['prefill', secMs(a, V.timeInModelPrefill)],
      ['decode', secMs(a, V.timeInModelDecode)],
    ]),
    ...opt('promptTokens', count(a, V.promptTokens, 'gen_ai.usage.input_tokens')),
    ...opt('completionTokens', count(a, V.completionTokens, 'gen_ai.usage.output_tokens')),
  };
}

/**
 * SGLang: the root span's `time_in_model_prefill` includes the wait queue; when the request's `prefill_waiting` slice
 * is among `descendants` it gives the queue, and prefill is the rest. Without it, the queue cannot be told apart and
 * the source says so.
 */
function sglangPhases(s: Span, descendants: readonly Span[]): LlmPhasesRead {
  const a = s.attributes;
  const waiting = descendants.find(
    (d) => d.traceId === s.traceId && d.name === SGLANG_SPAN.stages.prefillWaiting && d.startMs >= s.startMs - 1
  );
  const queueMs = waiting ? Math.max(0, waiting.endMs - waiting.startMs) : undefined;
  const prefillAll = secMs(a, S.timeInModelPrefill);
  const prefillMs = prefillAll !== undefined && queueMs !== undefined ? Math.max(0, prefillAll - queueMs) : prefillAll;
  const decodeMs = secMs(a, S.timeInModelDecode);
  // The dispatch to the scheduler comes before the queue: place the phases so they end where the first token and
  // the request end (ttft, e2e from the span's start).
  const ttft = secMs(a, S.timeToFirstToken);
  const firstAt = ttft !== undefined ? s.startMs + ttft : undefined;
  const queueStart = waiting
    ? waiting.startMs
    : firstAt !== undefined && prefillAll !== undefined
      ? firstAt - prefillAll
      : s.startMs;
  return {
    ...base(
      s,
      'sglang',
      waiting
        ? `${s.name.trim()} / gen_ai.latency.* (s) + ${SGLANG_SPAN.stages.prefillWaiting} slice`
        : `${s.name.trim()} / gen_ai.latency.* (s); no ${SGLANG_SPAN.stages.prefillWaiting} slice: prefill includes the queue`
    ),
    phases: laidOut(queueStart, [
      ['queue', queueMs],
      ['prefill', prefillMs],
      ['decode', decodeMs],
    ]),
    ...opt('promptTokens', count(a, S.promptTokens, 'gen_ai.usage.input_tokens')),
    ...opt('completionTokens', count(a, S.completionTokens, 'gen_ai.usage.output_tokens')),
  };
}

function tgiPhases(s: Span): LlmPhasesRead {
  const a = s.attributes;
  return {
    ...base(s, 'tgi', `${s.name} / ${T.validationTime}, ${T.queueTime}, ${T.inferenceTime} (Rust Duration text)`),
    phases: laidOut(s.startMs, [
      ['validation', parseTgiDuration(a[T.validationTime])],
      ['queue', parseTgiDuration(a[T.queueTime])],
      ['inference', parseTgiDuration(a[T.inferenceTime])],
    ]),
  };
}

function opt<K extends string>(k: K, v: number | undefined): Partial<Record<K, number>> {
  return v === undefined ? {} : ({ [k]: v } as Record<K, number>);
}

/**
 * The phases of an inference engine's request span (vLLM `llm_request`, SGLang's request root span, TGI's router
 * span), from any service; undefined for any other span. `descendants`: spans of the same trace (SGLang's stage slices
 * give its queue), optional.
 */
export function llmPhasesOf(span: Span, descendants: readonly Span[] = []): LlmPhasesRead | undefined {
  switch (engineOfSpan(span)) {
    case 'tgi':
      return tgiPhases(span);
    case 'sglang':
      return sglangPhases(span, descendants);
    case 'vllm':
      return vllmPhases(span);
    default:
      return undefined;
  }
}
