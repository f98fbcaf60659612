/**
 * Traces whose LLM hop is a real inference server's span, shaped as the engines write them (derived from their source,
 * not recorded from a running server: no GPU here):
 * - vLLM (vllm-project/vllm at d07822605346f767b672503c9aae85aa23ef2d82, vllm/v1/engine/output_processor.py
 *   `do_tracing`): one `llm_request` SERVER span starting at the request's arrival, child of the caller's context
 *   (the trace headers it was sent), with `gen_ai.latency.time_in_queue` (scheduled − queued),
 *   `time_to_first_token`, `time_in_model_prefill` (first token − scheduled), `time_in_model_decode` (last token −
 *   first token), `time_in_model_inference` (last token − scheduled), `e2e`, all in seconds (floats), and
 *   `gen_ai.usage.prompt_tokens` / `completion_tokens`, `gen_ai.request.id`, `gen_ai.response.finish_reasons` (a JSON
 *   list as a string), `gen_ai.request.max_tokens`. No `gen_ai.provider.name`, no pod: the resource says what the
 *   deployment sets (`OTEL_SERVICE_NAME`, `k8s.pod.name` by the Collector's k8sattributes).
 * - TGI (huggingface/text-generation-inference at d957e32601a99f9ec458ff081dc3b4c6659da8a4, router/src/server.rs):
 *   the router's HTTP SERVER span and, under it, the `generate` span of `#[instrument(skip_all, fields(total_time,
 *   validation_time, queue_time, inference_time, time_per_token, seed, …))]`, each recorded as
 *   `format!("{x:?}")` of a Rust `Duration` ("12.3ms", "850µs", "1.2s"): validation = queued − start, queue =
 *   start − queued, inference = now − start.
 */
import type { Span } from '../../../contract';
import { rng } from './synthetic';

export interface EngineCall {
  /** ms */
  queueMs: number;
  prefillMs: number;
  decodeMs: number;
  promptTokens: number;
  completionTokens: number;
  /** ms; TGI only. */
  validationMs?: number;
}

/** Rust's `Debug` of a `Duration` as TGI records it: "1.2s", "12.3ms", "850µs", "731ns" (shortest exact form). */
export function rustDuration(ms: number): string {
  const ns = Math.round(ms * 1e6);
  if (ns >= 1e9) return `${trim(ns / 1e9)}s`;
  if (ns >= 1e6) return `${trim(ns / 1e6)}ms`;
  if (ns >= 1e3) return `${trim(ns / 1e3)}µs`;
  return `${ns}ns`;
}
const trim = (x: number): string => String(Number(x.toFixed(6)));

const hex = (seed: number, n: number): string => {
  const r = rng(seed);
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
  return s;
};

interface TraceOpts {
  seed: number;
  startMs?: number;
  engine: 'vllm' | 'tgi';
  /** The inference server's service name (any: the attributes decide) and pod. */
  service: string;
  pod: string;
  call: EngineCall;
}

/** gateway (SERVER) → its chat call (CLIENT) → the engine's span(s); the gateway spends a few ms on either side. */
export function engineTrace(o: TraceOpts): Span[] {
  const traceId = hex(o.seed, 32);
  const ids = [1, 2, 3, 4].map((k) => hex(o.seed * 10 + k, 16));
  const t0 = o.startMs ?? 1_700_000_000_000 + o.seed * 10_000;
  const c = o.call;
  const validation = o.engine === 'tgi' ? (c.validationMs ?? 0.8) : 0;
  const engineMs = validation + c.queueMs + c.prefillMs + c.decodeMs;
  const callStart = t0 + 3;
  const serverStart = callStart + 0.6;
  const callEnd = serverStart + engineMs + 0.6;
  const gw = { 'service.name': 'gateway', 'k8s.pod.name': 'gateway-0' };
  const llmRes = { 'service.name': o.service, 'k8s.pod.name': o.pod };
  const spans: Span[] = [
    {
      traceId,
      spanId: ids[0],
      name: 'POST /v1/chat',
      service: 'gateway',
      kind: 'server',
      startMs: t0,
      endMs: callEnd + 2,
      status: 'unset',
      attributes: { 'http.request.method': 'POST', 'http.route': '/v1/chat' },
      resource: gw,
    },
    {
      traceId,
      spanId: ids[1],
      parentSpanId: ids[0],
      name: 'chat llama-3-8b',
      service: 'gateway',
      kind: 'client',
      startMs: callStart,
      endMs: callEnd,
      status: 'unset',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'llama-3-8b' },
      resource: gw,
    },
  ];
  if (o.engine === 'vllm') {
    const s = (ms: number): number => ms / 1000;
    spans.push({
      traceId,
      spanId: ids[2],
      parentSpanId: ids[1],
      name: 'llm_request',
      service: o.service,
      kind: 'server',
      startMs: serverStart,
      endMs: serverStart + engineMs,
      status: 'unset',
      attributes: {
        'gen_ai.latency.time_to_first_token': s(c.queueMs + c.prefillMs),
        'gen_ai.latency.e2e': s(engineMs),
        'gen_ai.latency.time_in_queue': s(c.queueMs),
        'gen_ai.usage.prompt_tokens': c.promptTokens,
        'gen_ai.usage.completion_tokens': c.completionTokens,
        'gen_ai.latency.time_in_model_prefill': s(c.prefillMs),
        'gen_ai.latency.time_in_model_decode': s(c.decodeMs),
        'gen_ai.latency.time_in_model_inference': s(c.prefillMs + c.decodeMs),
        'gen_ai.request.id': `chatcmpl-${hex(o.seed, 12)}`,
        'gen_ai.response.finish_reasons': '["stop"]',
        'gen_ai.request.max_tokens': 256,
      },
      resource: llmRes,
    });
  } else {
    const inference = c.prefillMs + c.decodeMs;
    spans.push(
      {
        traceId,
        spanId: ids[2],
        parentSpanId: ids[1],
        name: 'POST /generate',
        service: o.service,
        kind: 'server',
        startMs: serverStart,
        endMs: serverStart + engineMs + 0.2,
        status: 'unset',
        attributes: { 'http.request.method': 'POST', 'http.route': '/generate' },
        resource: llmRes,
      },
      {
        traceId,
        spanId: ids[3],
        parentSpanId: ids[2],
        name: 'generate',
        service: o.service,
        kind: 'internal',
        startMs: serverStart + 0.1,
        endMs: serverStart + 0.1 + engineMs,
        status: 'unset',
        attributes: {
          total_time: rustDuration(engineMs),
          validation_time: rustDuration(validation),
          queue_time: rustDuration(c.queueMs),
          inference_time: rustDuration(inference),
          time_per_token: rustDuration(inference / Math.max(1, c.completionTokens)),
          seed: 'None',
        },
        resource: llmRes,
      }
    );
  }
  return spans;
}

/** A healthy call: queue ~40 ms, prefill ~60 ms for ~600 prompt tokens, decode ~800 ms for ~100 tokens (±10%). */
export function healthyCall(seed: number): EngineCall {
  const r = rng(seed);
  const j = (x: number): number => x * (0.9 + 0.2 * r());
  return {
    queueMs: j(40),
    prefillMs: j(60),
    decodeMs: j(800),
    promptTokens: Math.round(j(600)),
    completionTokens: Math.round(j(100)),
  };
}
