/**
 * The engines' source this directory reads, at the commits read (public GitHub, through the file index). Every shape
 * here — span names, attribute keys, units, metric names and labels — is taken from these files; nothing is invented.
 */
export const ENGINE_SOURCES = {
  vllm: {
    repo: 'vllm-project/vllm',
    /** `OutputProcessor.do_tracing`: the `llm_request` SERVER span and its attributes. */
    span: { path: 'vllm/v1/engine/output_processor.py', commit: 'd07822605346f767b672503c9aae85aa23ef2d82' },
    /** `SpanAttributes`: the attribute keys (`gen_ai.latency.*` in seconds, `gen_ai.usage.prompt_tokens`, …). */
    attributes: { path: 'vllm/tracing/utils.py', commit: '0bf3270fe12361d1f31f8955f17e5bc5dde6780e' },
    /** The older releases' metric names (`vllm:gpu_cache_usage_perc`, `vllm:gpu_prefix_cache_*`, TPOT). */
    legacyMetrics: { path: 'vllm/v1/metrics/loggers.py', commit: 'a6f0308cfe806b7731ad4979c9bea6e470c35efd' },
    /** The current names: shared/fixtures/metrics/vllm/metrics-catalog.tsv (loggers.py, v0.11/0.12 era). */
    metrics: { path: 'vllm/v1/metrics/loggers.py', commit: 'shared/fixtures/metrics/vllm/metrics-catalog.tsv' },
  },
  sglang: {
    repo: 'sgl-project/sglang',
    /** `TraceReqContext`: the request's root span `"{role} Req {rid[:8]}"`, thread spans and stage slices. */
    span: { path: 'python/sglang/srt/observability/trace.py', commit: 'b8e5a7c39773b60a4d1f77647b8fda1fee65bba1' },
    /** `make_span_attrs`: what the root span carries at the request's end. */
    attributes: {
      path: 'python/sglang/srt/managers/tokenizer_manager_components/request_tracing.py',
      commit: '2d396b526f4fd2749397c0bc3f966e79f3f4ab71',
    },
    /** `APIServerReqTimeStats.convert_to_gen_ai_span_attrs` and the stage names (`prefill_waiting`, …). */
    timeStats: { path: 'python/sglang/srt/observability/req_time_stats.py', commit: 'read via the file index (2026)' },
    /** `SchedulerMetricsCollector` / `TokenizerMetricsCollector`: the `sglang:*` metrics, types and buckets. */
    metrics: { path: 'python/sglang/srt/metrics/collector.py', commit: '93d04878cfb9b08645fae7b11bd340ee33b34acf' },
  },
  tgi: {
    repo: 'huggingface/text-generation-inference',
    /** `#[instrument(fields(total_time, validation_time, queue_time, inference_time, time_per_token, seed))]` on
     *  `generate`, `generate_stream`, `completions`, `chat_completions`; recorded with `format!("{x:?}")` of a
     *  `std::time::Duration` (Rust's Debug format: `1.5s`, `12.345678ms`, `850µs`, `0ns`). */
    span: { path: 'router/src/server.rs', commit: 'db931fcf42da018a3657580c64bf2720f167f9ab' },
  },
} as const;
