/**
 * vLLM V1's Prometheus metrics, with the names, types, labels (`model_name`, `engine`) and default buckets of
 * vllm/v1/metrics/loggers.py (see fixtures/metrics/vllm/metrics-catalog.tsv). Counters are declared with their
 * exposed `_total` names, as prometheus_client renders them.
 * `names: 'legacy'` exposes an older release's names instead (vllm/v1/metrics/loggers.py @ a6f0308, see
 * contract/engines/metric-aliases.ts): `vllm:gpu_cache_usage_perc`, `vllm:gpu_prefix_cache_{queries,hits}_total` (in
 * blocks) and `vllm:time_per_output_token_seconds`, without `vllm:inter_token_latency_seconds` and
 * `vllm:request_time_per_output_token_seconds`, which that release did not have. The request-latency histograms carry trace exemplars
 * (served when the scrape asks for OpenMetrics, which prometheus_client negotiates too; the names stay the same).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { observeWithExemplar, type ExemplarLabels } from '../../telemetry/exemplars';
import type { InferenceEngine, SeqResult, StepInfo } from './engine';
import { MODEL_IDS } from './models';

export const VLLM_MAX_MODEL_LEN = 8192;

/** vLLM's build_1_2_5_buckets(max_model_len). */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let exp = 1; ; exp *= 10) {
    for (const m of [1, 2, 5]) {
      if (m * exp > max) return out;
      out.push(m * exp);
    }
  }
}

const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const REQ_LAT = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const ITER = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
const ENGINE = '0';

export interface LlmMetrics {
  /** `exemplar`: the request's trace, for the latency histograms that carry exemplars. */
  onFinish(model: string, r: SeqResult, maxTokens: number, exemplar?: ExemplarLabels): void;
  onFailure(model: string, code: string): void;
  onArrival(model: string, promptTokens: number, maxTokens: number): void;
}

/** Which release's metric names the simulated vLLM exposes (HOPSCOPE_VLLM_METRIC_NAMES). */
export type VllmMetricNames = 'current' | 'legacy';

export function vllmMetrics(
  registry: Registry,
  engine: InferenceEngine,
  servedModel: string,
  names: VllmMetricNames = 'current'
): LlmMetrics {
  const legacy = names === 'legacy';
  const L = ['model_name', 'engine'];
  const reg = [registry];
  const h = (name: string, help: string, buckets: number[], enableExemplars = false) =>
    new Histogram({ name, help, labelNames: L, buckets, registers: reg, enableExemplars });
  const c = (name: string, help: string, extra: string[] = []) =>
    new Counter({ name, help, labelNames: [...L, ...extra], registers: reg });
  const perModel = (name: string, help: string, value: (model: string) => number) =>
    new Gauge({
      name,
      help,
      labelNames: L,
      registers: reg,
      collect() {
        for (const m of MODEL_IDS) this.set({ model_name: m, engine: ENGINE }, value(m));
      },
    });

  perModel('vllm:num_requests_running', 'Number of requests in model execution batches.', (m) => engine.runningBy(m));
  perModel('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', (m) => engine.waitingBy(m));
  new Gauge({
    name: legacy ? 'vllm:gpu_cache_usage_perc' : 'vllm:kv_cache_usage_perc',
    help: legacy ? 'GPU KV-cache usage. 1 means 100 percent usage.' : 'KV-cache usage. 1 means 100 percent usage.',
    labelNames: L,
    registers: reg,
    collect() {
      this.set({ model_name: servedModel, engine: ENGINE }, engine.kvUsage);
    },
  });
  const info = new Gauge({
    name: 'vllm:cache_config_info',
    help: 'Information of the LLMEngine CacheConfig',
    labelNames: [
      'block_size',
      'cache_dtype',
      'enable_prefix_caching',
      'gpu_memory_utilization',
      'num_gpu_blocks',
      'engine',
    ],
    registers: reg,
  });
  info.set(
    {
      block_size: String(engine.opts.blockSize),
      cache_dtype: 'auto',
      enable_prefix_caching: 'True',
      gpu_memory_utilization: '0.9',
      num_gpu_blocks: String(engine.opts.kvCapacityTokens / engine.opts.blockSize),
      engine: ENGINE,
    },
    1
  );

  // Prefix cache and preemption counters follow the engine's own tallies (in tokens, as the current catalog says).
  let seenQ = 0,
    seenH = 0,
    seenP = 0;
  const queries = legacy
    ? c('vllm:gpu_prefix_cache_queries_total', 'GPU prefix cache queries, in terms of number of queried blocks.')
    : c('vllm:prefix_cache_queries_total', 'Prefix cache queries, in terms of number of queried tokens.');
  const hits = legacy
    ? c('vllm:gpu_prefix_cache_hits_total', 'GPU prefix cache hits, in terms of number of cached blocks.')
    : c('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.');
  // The older counters count blocks of the KV cache, the newer tokens.
  const unit = (tokens: number): number => (legacy ? Math.floor(tokens / engine.opts.blockSize) : tokens);
  const preempt = c('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.');
  const sync = (): void => {
    const l = { model_name: servedModel, engine: ENGINE };
    queries.inc(l, unit(engine.prefixQueries) - seenQ);
    seenQ = unit(engine.prefixQueries);
    hits.inc(l, unit(engine.prefixHits) - seenH);
    seenH = unit(engine.prefixHits);
    preempt.inc(l, engine.preemptions - seenP);
    seenP = engine.preemptions;
  };
  engine.on('step', sync);
  sync();

  const prompt = c('vllm:prompt_tokens_total', 'Number of prefill tokens processed.');
  const gen = c('vllm:generation_tokens_total', 'Number of generation tokens processed.');
  const success = c('vllm:request_success_total', 'Count of successfully processed requests.', ['finished_reason']);
  const promptH = h(
    'vllm:request_prompt_tokens',
    'Number of prefill tokens processed.',
    buckets125(VLLM_MAX_MODEL_LEN)
  );
  const genH = h(
    'vllm:request_generation_tokens',
    'Number of generation tokens processed.',
    buckets125(VLLM_MAX_MODEL_LEN)
  );
  const iter = h('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', ITER);
  const maxGen = h(
    'vllm:request_max_num_generation_tokens',
    'Histogram of maximum number of requested generation tokens.',
    buckets125(VLLM_MAX_MODEL_LEN)
  );
  const paramsN = h('vllm:request_params_n', 'Histogram of the n request parameter.', [1, 2, 5, 10, 20]);
  const paramsMax = h(
    'vllm:request_params_max_tokens',
    'Histogram of the max_tokens request parameter.',
    buckets125(VLLM_MAX_MODEL_LEN)
  );
  const ttft = h('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT, true);
  const itl = legacy
    ? h('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', ITL, true)
    : h('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL, true);
  const tpot = legacy
    ? undefined
    : h(
        'vllm:request_time_per_output_token_seconds',
        'Histogram of time_per_output_token_seconds per request.',
        ITL,
        true
      );
  const e2e = h('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', REQ_LAT, true);
  const queue = h(
    'vllm:request_queue_time_seconds',
    'Histogram of time spent in WAITING phase for request.',
    REQ_LAT,
    true
  );
  const infer = h(
    'vllm:request_inference_time_seconds',
    'Histogram of time spent in RUNNING phase for request.',
    REQ_LAT,
    true
  );
  const prefill = h(
    'vllm:request_prefill_time_seconds',
    'Histogram of time spent in PREFILL phase for request.',
    REQ_LAT,
    true
  );
  const decode = h(
    'vllm:request_decode_time_seconds',
    'Histogram of time spent in DECODE phase for request.',
    REQ_LAT,
    true
  );

  engine.on('step', (s: StepInfo) =>
    iter.observe({ model_name: servedModel, engine: ENGINE }, s.prefillTokens + s.decodeSeqs)
  );

  return {
    onArrival(model, _promptTokens, maxTokens) {
      const l = { model_name: model, engine: ENGINE };
      paramsN.observe(l, 1);
      paramsMax.observe(l, maxTokens);
      maxGen.observe(l, maxTokens);
    },
    onFinish(model, r, _maxTokens, ex) {
      const l = { model_name: model, engine: ENGINE };
      const s = (ms: number) => Math.max(0, ms) / 1000;
      const lat = (hist: Histogram<string>, v: number) => observeWithExemplar(hist, l, v, ex);
      prompt.inc(l, r.promptTokens);
      gen.inc(l, r.outputTokens);
      success.inc({ ...l, finished_reason: r.finishReason });
      promptH.observe(l, r.promptTokens);
      genH.observe(l, r.outputTokens);
      lat(ttft, s(r.firstTokenMs - r.arrivalMs));
      for (let i = 1; i < r.tokenTimes.length; i++) lat(itl, s(r.tokenTimes[i] - r.tokenTimes[i - 1]));
      if (tpot && r.outputTokens > 1) lat(tpot, s(r.endMs - r.firstTokenMs) / (r.outputTokens - 1));
      lat(e2e, s(r.endMs - r.arrivalMs));
      lat(queue, s(r.scheduledMs - r.arrivalMs));
      lat(infer, s(r.endMs - r.scheduledMs));
      lat(prefill, s(r.firstTokenMs - r.scheduledMs));
      lat(decode, s(r.endMs - r.firstTokenMs));
    },
    onFailure(model, code) {
      // vLLM counts aborted requests under request_success_total{finished_reason="abort"}.
      if (code === 'aborted' || code === 'gpu_oom' || code === 'injected_error')
        success.inc({ model_name: model, engine: ENGINE, finished_reason: 'abort' });
    },
  };
}
