/**
 * SGLang's Prometheus metrics (`--enable-metrics`), with the names, types, help and default buckets of
 * python/sglang/srt/metrics/collector.py @ 93d04878cfb9b08645fae7b11bd340ee33b34acf: the scheduler's gauges and queue
 * histogram (labels model_name, engine_type, tp_rank, pp_rank, as the scheduler sets them) and the tokenizer
 * manager's counters and latency histograms (label model_name). Counters are declared with their exposed `_total`
 * names, as prometheus_client renders them. Gauges are the scheduler's last logged figures: `token_usage` (0..1 of the
 * KV pool), `cache_hit_rate` (cached ÷ prompt tokens of the requests admitted since the last log), `gen_throughput`
 * and `num_retracted_reqs` (requests retracted — SGLang's preemption — since the last log).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { InferenceEngine } from './engine';
import type { LlmMetrics } from './metrics-vllm';

const TTFT = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
const E2E = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400];
const ITL = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4,
  6, 8,
];
const QUEUE = [
  0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900,
  1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
];

export function sglangMetrics(registry: Registry, engine: InferenceEngine, servedModel: string): LlmMetrics {
  const reg = [registry];
  const sched = { model_name: servedModel, engine_type: 'unified', tp_rank: '0', pp_rank: '0' };
  const SL = Object.keys(sched);
  const TL = ['model_name'];

  // The scheduler's figures since its last log (here: the last scrape).
  let last = { t: performance.now(), q: engine.prefixQueries, h: engine.prefixHits, p: engine.preemptions, tokens: 0 };
  let hitRate = 0;
  let generated = 0;
  const snapshot = () => {
    const now = performance.now();
    const dq = engine.prefixQueries - last.q;
    if (dq > 0) hitRate = (engine.prefixHits - last.h) / dq;
    const out = {
      throughput: ((generated - last.tokens) * 1000) / Math.max(1, now - last.t),
      retracted: engine.preemptions - last.p,
    };
    last = { t: now, q: engine.prefixQueries, h: engine.prefixHits, p: engine.preemptions, tokens: generated };
    return out;
  };
  let snap = { throughput: 0, retracted: 0 };
  const gauge = (name: string, help: string, value: () => number, first = false) =>
    new Gauge({
      name,
      help,
      labelNames: SL,
      registers: reg,
      collect() {
        if (first) snap = snapshot();
        this.set(sched, value());
      },
    });
  // Declared first so its collect() takes the snapshot the others read (prom-client collects in order).
  gauge('sglang:num_running_reqs', 'The number of running requests.', () => engine.numRunning, true);
  gauge('sglang:num_used_tokens', 'The number of used tokens.', () =>
    Math.round(engine.kvUsage * engine.capacityTokens)
  );
  gauge('sglang:token_usage', 'The token usage.', () => engine.kvUsage);
  gauge('sglang:gen_throughput', 'The generation throughput (token/s).', () => snap.throughput);
  gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', () => engine.numWaiting);
  gauge('sglang:cache_hit_rate', 'The prefix cache hit rate.', () => hitRate);
  gauge('sglang:num_retracted_reqs', 'The number of retracted requests.', () => snap.retracted);
  const queue = new Histogram({
    name: 'sglang:queue_time_seconds',
    help: 'Histogram of queueing time in seconds.',
    labelNames: SL,
    buckets: QUEUE,
    registers: reg,
  });

  const c = (name: string, help: string) => new Counter({ name, help, labelNames: TL, registers: reg });
  const h = (name: string, help: string, buckets: number[]) =>
    new Histogram({ name, help, labelNames: TL, buckets, registers: reg });
  const prompt = c('sglang:prompt_tokens_total', 'Number of prefill tokens processed.');
  const gen = c('sglang:generation_tokens_total', 'Number of generation tokens processed.');
  const cached = c('sglang:cached_tokens_total', 'Number of cached prompt tokens.');
  const requests = c('sglang:num_requests_total', 'Number of requests processed.');
  const aborted = c('sglang:num_aborted_requests_total', 'Number of requests aborted.');
  const ttft = h('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT);
  const itl = h('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL);
  const e2e = h('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', E2E);

  return {
    onArrival() {},
    onFinish(model, r) {
      const l = { model_name: model };
      const s = (ms: number) => Math.max(0, ms) / 1000;
      generated += r.outputTokens;
      prompt.inc(l, r.promptTokens);
      gen.inc(l, r.outputTokens);
      if (r.cachedTokens > 0) cached.inc(l, r.cachedTokens);
      requests.inc(l);
      e2e.observe(l, s(r.endMs - r.arrivalMs));
      ttft.observe(l, s(r.firstTokenMs - r.arrivalMs));
      for (let i = 1; i < r.tokenTimes.length; i++) itl.observe(l, s(r.tokenTimes[i] - r.tokenTimes[i - 1]));
      queue.observe(sched, s(r.scheduledMs - r.arrivalMs));
    },
    onFailure(model, code) {
      if (code === 'aborted' || code === 'gpu_oom' || code === 'injected_error') aborted.inc({ model_name: model });
    },
  };
}
