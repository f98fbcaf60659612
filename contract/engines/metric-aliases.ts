/**
 * Renamed engine metrics: one table per engine, newest name first, so a query can ask for whichever name a cluster's
 * release exposes and say which one it found. Read both ways: `metricAliasesOf` answers the whole group for an old
 * or a new name, with a histogram's `_bucket`/`_sum`/`_count` suffix carried over.
 */
import type { LlmPhases } from '../rca';

export type EngineName = LlmPhases['engine'];

export interface MetricAlias {
  /** What the metric measures, one word for the group. */
  concept: string;
  /** Its names, the current release's first, then older ones. */
  names: readonly string[];
  note?: string;
}

/**
 * vLLM: loggers.py at a6f0308 (older V1) declared `vllm:gpu_cache_usage_perc`, the counters `vllm:gpu_prefix_cache_queries`
 * / `_hits` (exposed with `_total`, in blocks) and `vllm:time_per_output_token_seconds`; the current catalog
 * (shared/fixtures/metrics/vllm) has `vllm:kv_cache_usage_perc`, `vllm:prefix_cache_{queries,hits}_total` (in tokens)
 * and `vllm:inter_token_latency_seconds` (the same per-token histogram, same buckets). SGLang and TGI: no renames
 * among the metrics Hopscope reads at the commits read.
 */
export const ENGINE_METRIC_ALIASES: Readonly<Record<EngineName, readonly MetricAlias[]>> = {
  vllm: [
    {
      concept: 'kv_cache_usage',
      names: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
      note: '0..1; renamed Nov 2025',
    },
    {
      concept: 'prefix_cache_queries',
      names: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
      note: 'the older counter counts blocks, the newer tokens: their ratio (hit rate) is comparable, not their values',
    },
    {
      concept: 'prefix_cache_hits',
      names: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
      note: 'blocks (older) or tokens (newer)',
    },
    {
      concept: 'inter_token_latency',
      names: ['vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds'],
      note: 'same per-token histogram and buckets; the old name removed Jan 2026',
    },
  ],
  sglang: [],
  tgi: [],
};

const SUFFIX_RE = /(_bucket|_sum|_count)$/;

/** The group a metric name belongs to (old or new, histogram suffix allowed), with the suffix re-applied to every
 *  name; the name alone when it has no alias. */
export function metricAliasesOf(name: string): string[] {
  for (const groups of Object.values(ENGINE_METRIC_ALIASES))
    for (const g of groups) {
      if (g.names.includes(name)) return [...g.names];
      const suffix = SUFFIX_RE.exec(name)?.[1];
      if (suffix && g.names.includes(name.slice(0, -suffix.length))) return g.names.map((n) => n + suffix);
    }
  return [name];
}

/** The current name of a metric, from any of its names (itself when it has no alias). */
export const currentMetricName = (name: string): string => metricAliasesOf(name)[0];
