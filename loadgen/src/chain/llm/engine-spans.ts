/**
 * The request spans each inference engine emits, written from the simulated engine's own timings with the shapes of
 * contract/engines (read from the engines' source; commits in contract/engines/sources.ts):
 * - vLLM: the `llm_request` SERVER span, arrival → last iteration, `gen_ai.latency.*` in seconds;
 * - TGI: the router's `chat_completions` span, its durations as Rust `Duration` Debug text (`"12.3ms"`); TGI's
 *   `parameters` field (the Debug text of its whole `GenerateParameters` struct) is left out;
 * - SGLang: the request root span `" Req <rid[:8]>"` with `make_span_attrs`'s attributes, a `scheduler` thread span
 *   and the stage slices `prefill_waiting`, `prefill_forward`, `decode_forward` (trace level 1).
 * Each is a child of the hop's HTTP server span, as the engines parent theirs on the caller's `traceparent`.
 * Only finished requests get one (vLLM's `do_tracing` and SGLang's `trace_req_finish` run at the request's end).
 */
import { createHash } from 'node:crypto';
import { context, trace, SpanKind, type Span, type Tracer } from '@opentelemetry/api';
import {
  SGLANG_SPAN,
  TGI_SPAN,
  VLLM_SPAN,
  formatTgiDuration,
  sglangRootSpanName,
  sglangThreadSpanName,
} from '../../../../contract/engines/index';
import type { LlmBackend } from '../../../../contract/chain';
import type { SeqResult } from './engine';

export interface EngineSpanInput {
  backend: LlmBackend;
  /** The hop's server span: the engine span's parent. */
  parent: Span;
  /** performance.now() when the handler took the request (TGI's `start_time`, SGLang's `created_time`). */
  startedMs: number;
  result: SeqResult;
  /** The response id (vLLM's `gen_ai.request.id` is the external request id). */
  requestId: string;
  model: string;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  pod: string;
}

const epoch = (perfMs: number): number => performance.timeOrigin + perfMs;
const sec = (ms: number): number => Math.max(0, ms) / 1000;

function vllmSpan(tracer: Tracer, i: EngineSpanInput, ctx: ReturnType<typeof context.active>): void {
  const r = i.result;
  const A = VLLM_SPAN.attributes;
  const span = tracer.startSpan(
    VLLM_SPAN.name,
    {
      kind: SpanKind.SERVER,
      startTime: epoch(r.arrivalMs),
      attributes: {
        [A.timeToFirstToken]: sec(r.firstTokenMs - r.arrivalMs),
        [A.e2e]: sec(r.endMs - r.arrivalMs),
        [A.timeInQueue]: sec(r.scheduledMs - r.arrivalMs),
        [A.promptTokens]: r.promptTokens,
        [A.completionTokens]: r.outputTokens,
        [A.timeInModelPrefill]: sec(r.firstTokenMs - r.scheduledMs),
        [A.timeInModelDecode]: sec(r.endMs - r.firstTokenMs),
        [A.timeInModelInference]: sec(r.endMs - r.scheduledMs),
        [A.requestId]: i.requestId,
        [A.finishReasons]: JSON.stringify([r.finishReason]),
        ...(i.topP ? { [A.topP]: i.topP } : {}),
        ...(i.maxTokens ? { [A.maxTokens]: i.maxTokens } : {}),
        ...(i.temperature ? { [A.temperature]: i.temperature } : {}),
      },
    },
    ctx
  );
  span.end(epoch(r.endMs));
}

function tgiSpan(tracer: Tracer, i: EngineSpanInput, ctx: ReturnType<typeof context.active>): void {
  const r = i.result;
  const F = TGI_SPAN.fields;
  const now = performance.now();
  const inference = now - r.scheduledMs;
  const span = tracer.startSpan(
    'chat_completions',
    {
      kind: SpanKind.INTERNAL,
      startTime: epoch(i.startedMs),
      attributes: {
        [F.totalTime]: formatTgiDuration(now - i.startedMs),
        [F.validationTime]: formatTgiDuration(r.arrivalMs - i.startedMs),
        [F.queueTime]: formatTgiDuration(r.scheduledMs - r.arrivalMs),
        [F.inferenceTime]: formatTgiDuration(inference),
        // Rust divides a Duration by the u32 token count: nanosecond resolution, truncated.
        [F.timePerToken]: formatTgiDuration(Math.floor((inference * 1e6) / Math.max(1, r.outputTokens)) / 1e6),
        [F.seed]: 'None',
      },
    },
    ctx
  );
  span.end(epoch(now));
}

function sglangSpans(tracer: Tracer, i: EngineSpanInput, ctx: ReturnType<typeof context.active>): void {
  const r = i.result;
  const A = SGLANG_SPAN.attributes;
  // SGLang's rid: a uuid4 hex; derived from the request id so it is stable per request.
  const rid = createHash('sha1').update(i.requestId).digest('hex').slice(0, 32);
  const hostId = createHash('sha1').update(i.pod).digest('hex').slice(0, 32);
  const root = tracer.startSpan(
    sglangRootSpanName(rid),
    {
      kind: SpanKind.INTERNAL,
      startTime: epoch(i.startedMs),
      attributes: { [A.rid]: rid, [A.module]: SGLANG_SPAN.module },
    },
    ctx
  );
  const rootCtx = trace.setSpan(ctx, root);
  const thread = tracer.startSpan(
    sglangThreadSpanName('scheduler', 0, hostId, process.pid),
    {
      kind: SpanKind.INTERNAL,
      startTime: epoch(r.arrivalMs),
      attributes: { tp_rank: 0, host_id: hostId, pid: process.pid, thread_label: 'scheduler' },
    },
    rootCtx
  );
  const threadCtx = trace.setSpan(rootCtx, thread);
  const slice = (name: string, from: number, to: number): void =>
    tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: epoch(from) }, threadCtx).end(epoch(to));
  slice(SGLANG_SPAN.stages.prefillWaiting, r.arrivalMs, r.scheduledMs);
  slice(SGLANG_SPAN.stages.prefillForward, r.scheduledMs, r.firstTokenMs);
  slice(SGLANG_SPAN.stages.decodeForward, r.firstTokenMs, r.endMs);
  thread.end(epoch(r.endMs));
  // make_span_attrs at the request's end; the dispatch to the scheduler finished when the engine took the request.
  root.setAttributes({
    [A.completionTokens]: r.outputTokens,
    [A.promptTokens]: r.promptTokens,
    [A.cachedTokens]: r.cachedTokens,
    [A.requestId]: rid,
    [A.maxTokens]: i.maxTokens,
    ...(i.topP ? { 'gen_ai.request.top_p': i.topP } : {}),
    ...(i.temperature ? { 'gen_ai.request.temperature': i.temperature } : {}),
    [A.responseModel]: i.model,
    [A.finishReasons]: JSON.stringify([r.finishReason]),
    [A.timeToFirstToken]: sec(r.firstTokenMs - i.startedMs),
    [A.e2e]: sec(r.endMs - i.startedMs),
    [A.timeInModelDecode]: sec(r.endMs - r.firstTokenMs),
    [A.timeInModelInference]: sec(r.endMs - r.arrivalMs),
    [A.timeInModelPrefill]: sec(r.firstTokenMs - r.arrivalMs),
  });
  root.end(epoch(r.endMs));
}

/** Emits the engine's own request span(s) for one finished request. */
export function recordEngineSpans(tracer: Tracer, i: EngineSpanInput): void {
  const ctx = trace.setSpan(context.active(), i.parent);
  if (i.backend === 'vllm') vllmSpan(tracer, i, ctx);
  else if (i.backend === 'tgi') tgiSpan(tracer, i, ctx);
  else sglangSpans(tracer, i, ctx);
}
