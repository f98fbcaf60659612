/**
 * The PromQL catalogue: every query the proxy builds (the golden metrics for vLLM, TGI and SGLang on their real names,
 * as in fixtures/metrics/AB-MAPPING.md and contract/engines — with an older release's names to fall back on where an
 * engine renamed a metric (ENGINE_METRIC_ALIASES) —, the DCGM heatmap fields, and the service/pod request figures from the services' own
 * counters or Tempo's span metrics), from label values escaped as PromQL string literals (names are whitelisted
 * upstream). Alert rules carry their own PromQL, written by the user.
 *
 * Rate windows follow Grafana's `$__rate_interval`: max(step + scrape interval, 4 × scrape interval), so a rate
 * always has enough samples whatever the scrape interval (a fixed 30 s minimum was too short at a 15 s scrape and
 * needlessly long at 1 s).
 */
import {
  metricAliasesOf,
  type DcgmField,
  type GoldenAnswer,
  type GoldenMetric,
  type InferenceBackend,
} from '../../../contract';

/** A PromQL double-quoted string literal; backslash, quote and newline escaped so a value cannot close the selector. */
function promString(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** `{a="x",b="y"}` from defined entries only; `''` when none. */
function matchers(labels: Record<string, string | undefined>): string {
  const parts = Object.entries(labels)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => {
      if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k)) throw new Error(`invalid label name ${k}`);
      return `${k}=${promString(v as string)}`;
    });
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Adds matchers to a selector that may already have some: `m{a="b"}` + `{c="d"}` → `m{a="b",c="d"}`. */
function withMatchers(metric: string, extra: string, base = ''): string {
  const inner = [base, extra.replace(/^\{|\}$/g, '')].filter(Boolean).join(',');
  return inner ? `${metric}{${inner}}` : metric;
}

/** One golden query: which metric of which backend it answers, in what unit, and where its numbers come from. */
export interface GoldenPlan {
  metric: GoldenMetric;
  backend: InferenceBackend;
  unit: string;
  query: string;
  /** The engine metric names the query reads (the current release's). */
  metricNames: string[];
  /** The same figure on an older release's names, asked in order when `query` finds no series. */
  fallbacks?: Array<{ query: string; metricNames: string[] }>;
  note?: string;
  origin?: 'otel';
}

/** The names a query reads: metric names before `{` or `[` (PromQL functions are followed by `(`). */
function namesIn(query: string): string[] {
  const names = new Set<string>();
  for (const m of query.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(?=\{|\[)/g)) names.add(m[1]);
  return [...names];
}

/**
 * A plan from a query template over metric names: the current names first; when any of them has an older name
 * (contract/engines ENGINE_METRIC_ALIASES), the same query on the older names as a fallback.
 */
function plan(
  p: Omit<GoldenPlan, 'query' | 'metricNames' | 'fallbacks'>,
  names: string[],
  build: (...n: string[]) => string
): GoldenPlan {
  const groups = names.map(metricAliasesOf);
  const depth = Math.max(...groups.map((g) => g.length));
  const variants = Array.from({ length: depth }, (_, i) => {
    const ns = groups.map((g) => g[Math.min(i, g.length - 1)]);
    const query = build(...ns);
    return { query, metricNames: namesIn(query) };
  });
  const [first, ...rest] = variants;
  return { ...p, ...first, ...(rest.length ? { fallbacks: rest } : {}) };
}

/** Prometheus' default scrape interval (HOPSCOPE_SCRAPE_INTERVAL's default). */
export const DEFAULT_SCRAPE_MS = 15_000;

/** Grafana's `$__rate_interval` rule in ms: max(step + scrape, 4 × scrape). */
export function rateIntervalMs(stepMs: number, scrapeMs: number): number {
  return Math.max(stepMs + scrapeMs, 4 * scrapeMs);
}

/** A PromQL range-vector duration of at least `ms`, in whole seconds. */
export function promDuration(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))}s`;
}

export function goldenPlans(o: {
  backend?: InferenceBackend;
  model?: string;
  service?: string;
  stepMs: number;
  scrapeMs?: number;
}): { plans: GoldenPlan[]; missing: GoldenAnswer['missing'] } {
  const w = promDuration(rateIntervalMs(o.stepMs, o.scrapeMs ?? DEFAULT_SCRAPE_MS));
  // `service` matches the target label our scrape configs set (the chain's http_sd, k8s service discovery relabels).
  const m = matchers({ model_name: o.model, service: o.service });
  const ts = matchers({ service: o.service });
  const t = (metric: string): string => withMatchers(metric, ts);
  const plans: GoldenPlan[] = [];
  const missing: GoldenAnswer['missing'] = [];
  const want = (b: InferenceBackend): boolean => !o.backend || o.backend === b;
  if (want('vllm')) {
    const v = (metric: string, base = ''): string => withMatchers(metric, m, base);
    const p = (metric: GoldenMetric, unit: string, names: string[], build: (...n: string[]) => string, note?: string) =>
      plans.push(plan({ metric, backend: 'vllm', unit, ...(note ? { note } : {}) }, names, build));
    p('rps', 'req/s', ['vllm:request_success_total'], (n) => `sum by (model_name) (rate(${v(n)}[${w}]))`);
    p(
      'output_tokens_per_s',
      'tokens/s',
      ['vllm:generation_tokens_total'],
      (n) => `sum by (model_name) (rate(${v(n)}[${w}]))`
    );
    p(
      'e2e_p99_s',
      's',
      ['vllm:e2e_request_latency_seconds_bucket'],
      (n) => `histogram_quantile(0.99, sum by (le, model_name) (rate(${v(n)}[${w}])))`,
      'server-side, bucket-interpolated (vLLM buckets start at 0.3 s)'
    );
    p(
      'ttft_p99_s',
      's',
      ['vllm:time_to_first_token_seconds_bucket'],
      (n) => `histogram_quantile(0.99, sum by (le, model_name) (rate(${v(n)}[${w}])))`
    );
    p(
      'kv_cache_hit_rate',
      'ratio',
      ['vllm:prefix_cache_hits_total', 'vllm:prefix_cache_queries_total'],
      (h, q) => `sum by (model_name) (rate(${v(h)}[${w}])) / sum by (model_name) (rate(${v(q)}[${w}]))`,
      'prefix-cache hits / queries'
    );
    p(
      'error_rate',
      'ratio',
      ['vllm:request_success_total'],
      (n) =>
        `(sum by (model_name) (rate(${v(n, 'finished_reason="abort"')}[${w}])) or 0 * sum by (model_name) (rate(${v(n)}[${w}]))) / sum by (model_name) (rate(${v(n)}[${w}]))`,
      'vLLM has no failure counter: aborted / finished requests (0 while no abort series exists yet)'
    );
  }
  if (want('sglang')) {
    // SGLang (python/sglang/srt/metrics/collector.py @ 93d0487): the tokenizer manager's counters and histograms,
    // labelled model_name.
    const v = (metric: string): string => withMatchers(metric, m);
    const p = (metric: GoldenMetric, unit: string, names: string[], build: (...n: string[]) => string, note?: string) =>
      plans.push(plan({ metric, backend: 'sglang', unit, ...(note ? { note } : {}) }, names, build));
    p('rps', 'req/s', ['sglang:num_requests_total'], (n) => `sum by (model_name) (rate(${v(n)}[${w}]))`);
    p(
      'output_tokens_per_s',
      'tokens/s',
      ['sglang:generation_tokens_total'],
      (n) => `sum by (model_name) (rate(${v(n)}[${w}]))`
    );
    p(
      'e2e_p99_s',
      's',
      ['sglang:e2e_request_latency_seconds_bucket'],
      (n) => `histogram_quantile(0.99, sum by (le, model_name) (rate(${v(n)}[${w}])))`,
      'server-side, bucket-interpolated (SGLang buckets start at 0.1 s)'
    );
    p(
      'ttft_p99_s',
      's',
      ['sglang:time_to_first_token_seconds_bucket'],
      (n) => `histogram_quantile(0.99, sum by (le, model_name) (rate(${v(n)}[${w}])))`
    );
    p(
      'kv_cache_hit_rate',
      'ratio',
      ['sglang:cached_tokens_total', 'sglang:prompt_tokens_total'],
      (c, t) =>
        `(sum by (model_name) (rate(${v(c)}[${w}])) or 0 * sum by (model_name) (rate(${v(t)}[${w}]))) / sum by (model_name) (rate(${v(t)}[${w}]))`,
      'cached / prompt tokens (SGLang counts cached tokens only once some are: 0 until then)'
    );
    p(
      'error_rate',
      'ratio',
      ['sglang:num_aborted_requests_total', 'sglang:num_requests_total'],
      (a, n) =>
        `(sum by (model_name) (rate(${v(a)}[${w}])) or 0 * sum by (model_name) (rate(${v(n)}[${w}]))) / (sum by (model_name) (rate(${v(n)}[${w}])) + (sum by (model_name) (rate(${v(a)}[${w}])) or 0 * sum by (model_name) (rate(${v(n)}[${w}]))))`,
      'aborted / (finished + aborted) requests'
    );
  }
  if (want('tgi')) {
    const push = (...ps: Array<Omit<GoldenPlan, 'metricNames'>>) =>
      plans.push(...ps.map((x) => ({ ...x, metricNames: namesIn(x.query) })));
    const note = o.model ? 'TGI exposes no model label: the model filter does not apply' : undefined;
    push(
      { metric: 'rps', backend: 'tgi', unit: 'req/s', query: `sum(rate(${t('tgi_request_success')}[${w}]))`, note },
      {
        metric: 'output_tokens_per_s',
        backend: 'tgi',
        unit: 'tokens/s',
        query: `sum(rate(${t('tgi_request_generated_tokens_sum')}[${w}]))`,
        note: 'TGI counts tokens of finished requests only',
      },
      {
        metric: 'e2e_p99_s',
        backend: 'tgi',
        unit: 's',
        query: `histogram_quantile(0.99, sum by (le) (rate(${t('tgi_request_duration_bucket')}[${w}])))`,
        note: 'server-side, bucket-interpolated',
      },
      // TGI has no TTFT metric: the OTel GenAI client histogram (what the load generator / instrumented clients export).
      {
        metric: 'ttft_p99_s',
        backend: 'tgi',
        unit: 's',
        origin: 'otel',
        query: `histogram_quantile(0.99, sum by (le, gen_ai_request_model) (rate(${withMatchers('gen_ai_client_operation_time_to_first_chunk_seconds_bucket', matchers({ gen_ai_provider_name: 'tgi', gen_ai_request_model: o.model, service: o.service }))}[${w}])))`,
        note: 'TGI has no TTFT metric: client-side OTel gen_ai.client.operation.time_to_first_chunk',
      },
      {
        metric: 'error_rate',
        backend: 'tgi',
        unit: 'ratio',
        query: `(sum(rate(${t('tgi_request_failure')}[${w}])) or vector(0)) / (sum(rate(${t('tgi_request_success')}[${w}])) + (sum(rate(${t('tgi_request_failure')}[${w}])) or vector(0)))`,
      }
    );
    missing.push({ metric: 'kv_cache_hit_rate', backend: 'tgi', reason: 'TGI exposes no KV/prefix-cache hit metric' });
  }
  return { plans, missing };
}

/** One DCGM field's series, optionally of one pod or namespace (the heatmap asks all fields at once). */
export function dcgmQuery(field: DcgmField, o: { pod?: string; namespace?: string }): string {
  return withMatchers(field, matchers({ pod: o.pod, namespace: o.namespace }));
}

/**
 * Request figures from the services' own counters, as the demo chain's hops expose them (prom-client):
 * `hopscope_requests_total{route, code}` and `hopscope_request_duration_seconds` (route), with `service`, `pod` and
 * `node` from the scrape target. Errors are 5xx answers. Grouped by `by` (e.g. service and pod).
 */
export function serviceMetricsQueries(o: { by: string[]; window: string; service?: string }): {
  requests: string;
  errors: string;
  p50: string;
  p99: string;
} {
  const m = matchers({ service: o.service });
  const by = o.by.join(', ');
  const errs = withMatchers('hopscope_requests_total', m, 'code=~"5.."');
  const q = (x: number): string =>
    `histogram_quantile(${x}, sum by (${by}, le) (rate(${withMatchers('hopscope_request_duration_seconds_bucket', m)}[${o.window}])))`;
  return {
    requests: `sum by (${by}) (rate(${withMatchers('hopscope_requests_total', m)}[${o.window}]))`,
    errors: `sum by (${by}) (rate(${errs}[${o.window}]))`,
    p50: q(0.5),
    p99: q(0.99),
  };
}

/** Span kinds that stand for a service's requests (as Tempo's span metrics name them). */
export const REQUEST_SPAN_KINDS = 'SPAN_KIND_SERVER|SPAN_KIND_CONSUMER';

/**
 * Request figures from Tempo's span metrics (metrics generator): `traces_spanmetrics_calls_total` and
 * `traces_spanmetrics_latency_bucket` (seconds), labelled `service`, `span_kind`, `status_code` and the pod in
 * `k8s_pod_name` (the `k8s.pod.name` dimension). Calls and errors are split by `span_kind` (a service's requests are
 * its server/consumer spans, or all of its spans when it has none); percentiles come for both choices.
 */
export function spanMetricsQueries(o: { by: string[]; window: string; service?: string }): {
  calls: string;
  errors: string;
  p50: string;
  p99: string;
  p50All: string;
  p99All: string;
} {
  const m = matchers({ service: o.service });
  const by = o.by.join(', ');
  const calls = (base = ''): string =>
    `sum by (${by}, span_kind) (rate(${withMatchers('traces_spanmetrics_calls_total', m, base)}[${o.window}]))`;
  const q = (x: number, kinds: boolean): string =>
    `histogram_quantile(${x}, sum by (${by}, le) (rate(${withMatchers('traces_spanmetrics_latency_bucket', m, kinds ? `span_kind=~"${REQUEST_SPAN_KINDS}"` : '')}[${o.window}])))`;
  return {
    calls: calls(),
    errors: calls('status_code="STATUS_CODE_ERROR"'),
    p50: q(0.5, true),
    p99: q(0.99, true),
    p50All: q(0.5, false),
    p99All: q(0.99, false),
  };
}
