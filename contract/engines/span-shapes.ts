/**
 * The request spans the three inference engines emit, as their source writes them (./sources): names, kinds,
 * attribute keys and units. The simulated chain emits these and `llmPhasesOf` reads them, so the code that reads the
 * simulation is the code that reads a real server.
 */

/** vLLM `OutputProcessor.do_tracing`: one SERVER span per finished request, started at the request's arrival, its
 *  parent the caller's `traceparent`. Every `gen_ai.latency.*` value is in seconds (float). */
export const VLLM_SPAN = {
  name: 'llm_request',
  kind: 'server',
  attributes: {
    timeToFirstToken: 'gen_ai.latency.time_to_first_token',
    e2e: 'gen_ai.latency.e2e',
    /** scheduled_ts − queued_ts */
    timeInQueue: 'gen_ai.latency.time_in_queue',
    /** first_token_ts − scheduled_ts */
    timeInModelPrefill: 'gen_ai.latency.time_in_model_prefill',
    /** last_token_ts − first_token_ts */
    timeInModelDecode: 'gen_ai.latency.time_in_model_decode',
    /** last_token_ts − scheduled_ts */
    timeInModelInference: 'gen_ai.latency.time_in_model_inference',
    /** The older GenAI names (the conventions now say `gen_ai.usage.input_tokens` / `output_tokens`). */
    promptTokens: 'gen_ai.usage.prompt_tokens',
    completionTokens: 'gen_ai.usage.completion_tokens',
    requestId: 'gen_ai.request.id',
    /** `json.dumps([finish_reason])`, e.g. `["stop"]`. */
    finishReasons: 'gen_ai.response.finish_reasons',
    /** Set only when the request set them (truthy). */
    topP: 'gen_ai.request.top_p',
    maxTokens: 'gen_ai.request.max_tokens',
    temperature: 'gen_ai.request.temperature',
    n: 'gen_ai.request.n',
  },
  /** Declared in `SpanAttributes` (`GEN_AI_RESPONSE_MODEL`) but not set by `do_tracing` at the commit read. */
  declaredNotSet: ['gen_ai.response.model'],
} as const;

/** SGLang `TraceReqContext` (`--enable-trace`): spans are INTERNAL (no kind given). The request's root span is
 *  `"{role} Req {rid[:8]}"` — role empty for a unified (non-disaggregated) server, so the name starts with a space —
 *  with `rid` and `module: "sglang::request"`; at the request's end it gets `make_span_attrs`: the vLLM-named usage
 *  and `gen_ai.latency.*` keys (seconds), but no `time_in_queue`: its prefill runs from the dispatch to the
 *  scheduler to the first token, so it includes the wait queue. The queue itself is a stage slice below a thread
 *  span: `prefill_waiting` (wait-queue entry → forward entry), then `prefill_forward`, `decode_forward`. */
export const SGLANG_SPAN = {
  kind: 'internal',
  module: 'sglang::request',
  attributes: {
    rid: 'rid',
    module: 'module',
    timeToFirstToken: 'gen_ai.latency.time_to_first_token',
    e2e: 'gen_ai.latency.e2e',
    /** first_token − api_server_dispatch_finish (includes the scheduler's wait queue) */
    timeInModelPrefill: 'gen_ai.latency.time_in_model_prefill',
    /** finished − first_token */
    timeInModelDecode: 'gen_ai.latency.time_in_model_decode',
    /** finished − api_server_dispatch_finish */
    timeInModelInference: 'gen_ai.latency.time_in_model_inference',
    promptTokens: 'gen_ai.usage.prompt_tokens',
    completionTokens: 'gen_ai.usage.completion_tokens',
    cachedTokens: 'gen_ai.usage.cached_tokens',
    requestId: 'gen_ai.request.id',
    maxTokens: 'gen_ai.request.max_tokens',
    responseModel: 'gen_ai.response.model',
    finishReasons: 'gen_ai.response.finish_reasons',
  },
  /** Stage slices (RequestStage) of a unified server, at trace level 1. */
  stages: {
    prefillWaiting: 'prefill_waiting',
    prefillForward: 'prefill_forward',
    decodeForward: 'decode_forward',
  },
} as const;

/** The root span's name: `f"{role} Req {orig_rid[:8]}"`, role `""` when unified. */
export const sglangRootSpanName = (rid: string, role: '' | 'prefill' | 'decode' = ''): string =>
  `${role} Req ${(rid.split('_').pop() ?? rid).slice(0, 8)}`;

/** A thread's span: `f"{thread_label}"` + `f" [TP {tp_rank}] "` + `f"(host:{host_id[:8]} | pid:{pid})"`. */
export const sglangThreadSpanName = (label: string, tpRank: number | undefined, hostId: string, pid: number): string =>
  `${label}${tpRank !== undefined ? ` [TP ${tpRank}] ` : ''}(host:${hostId.slice(0, 8)} | pid:${pid})`;

/** A root span's name as SGLang writes it (`" Req 1a2b3c4d"`, `"prefill Req 1a2b3c4d"`). */
export const SGLANG_ROOT_NAME_RE = /^(?:prefill|decode|unknown)? Req \S{1,8}$/;

/** TGI's router: a `tracing` span per handler, named after it (`#[instrument]`), exported through
 *  tracing-opentelemetry (kind INTERNAL, parent set to the caller's `traceparent`). Its duration fields are strings in
 *  Rust's `Duration` Debug format (./tgi-duration). */
export const TGI_SPAN = {
  names: ['generate', 'generate_stream', 'completions', 'chat_completions'],
  kind: 'internal',
  fields: {
    totalTime: 'total_time',
    validationTime: 'validation_time',
    queueTime: 'queue_time',
    inferenceTime: 'inference_time',
    timePerToken: 'time_per_token',
    /** `format!("{:?}", seed)`: `Some(42)` / `None`. */
    seed: 'seed',
    /** `format!("{:?}", parameters)` (generate, generate_stream, chat_completions; not completions). */
    parameters: 'parameters',
  },
} as const;
