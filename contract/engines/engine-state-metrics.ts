/**
 * Where each engine keeps the figures of its state (`EngineState` in contract/rca): the metric names (each with its
 * aliases, ./metric-aliases), what kind of sample they are and how a figure is made of them. Names and types from
 * the engines' source (./sources); a figure an engine does not expose is absent, never 0.
 */
import { metricAliasesOf, type EngineName } from './metric-aliases';

export type EngineFigure = 'waiting' | 'running' | 'kvCacheUsage' | 'preemptionsPerMin' | 'prefixCacheHitRate';

export type EngineFigureSource =
  /** A gauge read as is (0..1 for ratios). */
  | { kind: 'gauge'; metric: readonly string[] }
  /** A counter's increase per minute. */
  | { kind: 'counter_per_min'; metric: readonly string[] }
  /** increase(numerator) ÷ increase(denominator), both counters. */
  | { kind: 'counter_ratio'; numerator: readonly string[]; denominator: readonly string[] }
  /** gauge ÷ gauge. */
  | { kind: 'gauge_ratio'; numerator: readonly string[]; denominator: readonly string[] };

const g = (m: string): EngineFigureSource => ({ kind: 'gauge', metric: metricAliasesOf(m) });

export const ENGINE_STATE_METRICS: Readonly<Record<EngineName, Partial<Record<EngineFigure, EngineFigureSource>>>> = {
  // Labels: model_name, engine.
  vllm: {
    waiting: g('vllm:num_requests_waiting'),
    running: g('vllm:num_requests_running'),
    kvCacheUsage: g('vllm:kv_cache_usage_perc'),
    preemptionsPerMin: { kind: 'counter_per_min', metric: ['vllm:num_preemptions_total'] },
    prefixCacheHitRate: {
      kind: 'counter_ratio',
      numerator: metricAliasesOf('vllm:prefix_cache_hits_total'),
      denominator: metricAliasesOf('vllm:prefix_cache_queries_total'),
    },
  },
  // Labels (scheduler): model_name, engine_type, tp_rank, pp_rank (+ dp_rank). `sglang:num_retracted_reqs` is a
  // gauge of one step's retractions, not a counter: no preemptions per minute can be made of it.
  sglang: {
    waiting: g('sglang:num_queue_reqs'),
    running: g('sglang:num_running_reqs'),
    kvCacheUsage: g('sglang:token_usage'),
    prefixCacheHitRate: g('sglang:cache_hit_rate'),
  },
  // No labels of its own (one model per server). No preemption or prefix-cache metric.
  tgi: {
    waiting: g('tgi_queue_size'),
    running: g('tgi_batch_current_size'),
    kvCacheUsage: {
      kind: 'gauge_ratio',
      numerator: ['tgi_batch_current_max_tokens'],
      denominator: ['tgi_batch_max_total_tokens'],
    },
  },
};
