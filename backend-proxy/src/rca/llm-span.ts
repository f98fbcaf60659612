/**
 * An inference server's request span, split into the phases the engine itself timed (no baselines, no state: the
 * `llm phases` pass adds those). Read from the attributes as the engines write them:
 * - vLLM: the `llm_request` SERVER span of vllm/v1/engine/output_processor.py `do_tracing` (vllm-project/vllm at
 *   d07822605346f767b672503c9aae85aa23ef2d82): `gen_ai.latency.time_in_queue` (scheduled − queued),
 *   `time_in_model_prefill` (first token − scheduled), `time_in_model_decode` (last token − first token), in seconds;
 *   the span starts at the request's arrival. Prompt/completion tokens in `gen_ai.usage.prompt_tokens` /
 *   `completion_tokens` (the older GenAI names vLLM keeps), else the current `input_tokens` / `output_tokens`.
 * - TGI: the router's request span (router/src/server.rs, `span.record("queue_time", format!("{queue_time:?}"))`):
 *   `validation_time`, `queue_time`, `inference_time`, `time_per_token` as Rust `Duration` Debug strings ("12.3ms",
 *   "850µs", "1.2s"); validation, then queue, then inference. Text-embeddings-inference records `queue_time` and
 *   `inference_time` too (with `tokenization_time`): a TGI span is told by `validation_time` or `time_per_token`.
 * Any service name: the attributes decide, not the name.
 */
import type { LlmPhase, LlmPhases, Span } from '../../../contract';
import { podOrServiceOfSpan } from '../../../contract';

const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;

const RUST_UNIT: Record<string, number> = { ns: 1e-6, µs: 1e-3, us: 1e-3, ms: 1, s: 1000 };

/** A Rust `Duration` as `{:?}` prints it ("1.2s", "12.3ms", "850µs", "7ns") → ms; anything else → undefined. */
export function rustDurationMs(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ns|µs|us|ms|s)\s*$/.exec(v);
  return m ? Number(m[1]) * RUST_UNIT[m[2]] : undefined;
}

const tokens = (a: Span['attributes'], keys: readonly string[]): number | undefined => {
  for (const k of keys) {
    const n = num(a[k]);
    if (n !== undefined && n >= 0) return n;
  }
  return undefined;
};

const PROMPT = ['gen_ai.usage.prompt_tokens', 'gen_ai.usage.input_tokens'] as const;
const COMPLETION = ['gen_ai.usage.completion_tokens', 'gen_ai.usage.output_tokens'] as const;

/** Cheap test first (one attribute lookup): most spans of a trace are no inference server's. */
export function llmPhasesOf(s: Span): LlmPhases | undefined {
  const a = s.attributes;
  if (s.kind === 'client') return undefined;
  const q = a['gen_ai.latency.time_in_queue'];
  if (q !== undefined) return vllm(s, q);
  if (a.queue_time !== undefined && a.inference_time !== undefined) return tgi(s);
  return undefined;
}

function vllm(s: Span, qRaw: unknown): LlmPhases | undefined {
  const a = s.attributes;
  const queue = num(qRaw);
  const prefill = num(a['gen_ai.latency.time_in_model_prefill']);
  const decode = num(a['gen_ai.latency.time_in_model_decode']);
  if (queue === undefined && prefill === undefined && decode === undefined) return undefined;
  const phases: LlmPhase[] = [];
  let at = s.startMs;
  for (const [name, v] of [
    ['queue', queue],
    ['prefill', prefill],
    ['decode', decode],
  ] as const) {
    if (v === undefined || v < 0) continue;
    const ms = v * 1000;
    phases.push({ name, durationMs: ms, startMs: at });
    at += ms;
  }
  return {
    spanId: s.spanId,
    service: s.service,
    pod: podOrServiceOfSpan(s),
    engine: 'vllm',
    source: `${s.name} / gen_ai.latency.*`,
    startMs: s.startMs,
    durationMs: s.endMs - s.startMs,
    phases,
    ...opt('promptTokens', tokens(a, PROMPT)),
    ...opt('completionTokens', tokens(a, COMPLETION)),
  };
}

function tgi(s: Span): LlmPhases | undefined {
  const a = s.attributes;
  const validation = rustDurationMs(a.validation_time);
  const queue = rustDurationMs(a.queue_time);
  const inference = rustDurationMs(a.inference_time);
  if (queue === undefined || inference === undefined) return undefined;
  if (validation === undefined && rustDurationMs(a.time_per_token) === undefined) return undefined;
  const phases: LlmPhase[] = [];
  let at = s.startMs;
  for (const [name, v] of [
    ['validation', validation],
    ['queue', queue],
    ['inference', inference],
  ] as const) {
    if (v === undefined) continue;
    phases.push({ name, durationMs: v, startMs: at });
    at += v;
  }
  const prompt = tokens(a, ['prompt_tokens', ...PROMPT]);
  const completion = tokens(a, ['generated_tokens', ...COMPLETION]);
  return {
    spanId: s.spanId,
    service: s.service,
    pod: podOrServiceOfSpan(s),
    engine: 'tgi',
    source: `${s.name} / queue_time, inference_time`,
    startMs: s.startMs,
    durationMs: s.endMs - s.startMs,
    phases,
    ...opt('promptTokens', prompt),
    ...opt('completionTokens', completion),
  };
}

const opt = <K extends string>(k: K, v: number | undefined): Partial<Record<K, number>> =>
  v === undefined ? {} : ({ [k]: v } as Record<K, number>);
