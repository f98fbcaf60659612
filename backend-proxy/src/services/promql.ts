/**
 * The PromQL catalogue: every query the proxy builds (the golden metrics for vLLM and TGI on their real names, as in
 * fixtures/metrics/AB-MAPPING.md, and the DCGM heatmap fields), from label values escaped as PromQL string literals
 * (names are whitelisted upstream). Alert rules carry their own PromQL, written by the user.
 */
import type { DcgmField, GoldenAnswer, GoldenMetric, InferenceBackend } from '../../../contract';

/** A PromQL double-quoted string literal; backslash, quote and newline escaped so a value cannot close the selector. */
function promString(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** `{a="x",b="y"}` from defined entries only; `''` when none. */
function matchers(labels: Record<string, string | undefined>): string {
  const parts = Object.entries(labels).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => {
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
interface GoldenPlan { metric: GoldenMetric; backend: InferenceBackend; unit: string; query: string; note?: string; origin?: 'otel' }

export function goldenPlans(o: { backend?: InferenceBackend; model?: string; service?: string; stepMs: number }): { plans: GoldenPlan[]; missing: GoldenAnswer['missing'] } {
  const w = `${Math.max(30, Math.ceil((2 * o.stepMs) / 1000))}s`;
  // `service` matches the target label our scrape configs set (the chain's http_sd, k8s service discovery relabels).
  const m = matchers({ model_name: o.model, service: o.service });
  const ts = matchers({ service: o.service });
  const t = (metric: string): string => withMatchers(metric, ts);
  const plans: GoldenPlan[] = [];
  const missing: GoldenAnswer['missing'] = [];
  if (o.backend !== 'tgi') {
    const v = (metric: string, base = ''): string => withMatchers(metric, m, base);
    plans.push(
      { metric: 'rps', backend: 'vllm', unit: 'req/s', query: `sum by (model_name) (rate(${v('vllm:request_success_total')}[${w}]))` },
      { metric: 'output_tokens_per_s', backend: 'vllm', unit: 'tokens/s', query: `sum by (model_name) (rate(${v('vllm:generation_tokens_total')}[${w}]))` },
      { metric: 'e2e_p99_s', backend: 'vllm', unit: 's', query: `histogram_quantile(0.99, sum by (le, model_name) (rate(${v('vllm:e2e_request_latency_seconds_bucket')}[${w}])))`, note: 'server-side, bucket-interpolated (vLLM buckets start at 0.3 s)' },
      { metric: 'ttft_p99_s', backend: 'vllm', unit: 's', query: `histogram_quantile(0.99, sum by (le, model_name) (rate(${v('vllm:time_to_first_token_seconds_bucket')}[${w}])))` },
      { metric: 'kv_cache_hit_rate', backend: 'vllm', unit: 'ratio', query: `sum by (model_name) (rate(${v('vllm:prefix_cache_hits_total')}[${w}])) / sum by (model_name) (rate(${v('vllm:prefix_cache_queries_total')}[${w}]))`, note: 'prefix-cache hits / queries' },
      { metric: 'error_rate', backend: 'vllm', unit: 'ratio', query: `(sum by (model_name) (rate(${v('vllm:request_success_total', 'finished_reason="abort"')}[${w}])) or 0 * sum by (model_name) (rate(${v('vllm:request_success_total')}[${w}]))) / sum by (model_name) (rate(${v('vllm:request_success_total')}[${w}]))`, note: 'vLLM has no failure counter: aborted / finished requests (0 while no abort series exists yet)' },
    );
  }
  if (o.backend !== 'vllm') {
    const note = o.model ? 'TGI exposes no model label: the model filter does not apply' : undefined;
    plans.push(
      { metric: 'rps', backend: 'tgi', unit: 'req/s', query: `sum(rate(${t('tgi_request_success')}[${w}]))`, note },
      { metric: 'output_tokens_per_s', backend: 'tgi', unit: 'tokens/s', query: `sum(rate(${t('tgi_request_generated_tokens_sum')}[${w}]))`, note: 'TGI counts tokens of finished requests only' },
      { metric: 'e2e_p99_s', backend: 'tgi', unit: 's', query: `histogram_quantile(0.99, sum by (le) (rate(${t('tgi_request_duration_bucket')}[${w}])))`, note: 'server-side, bucket-interpolated' },
      // TGI has no TTFT metric: the OTel GenAI client histogram (what the load generator / instrumented clients export).
      {
        metric: 'ttft_p99_s', backend: 'tgi', unit: 's', origin: 'otel',
        query: `histogram_quantile(0.99, sum by (le, gen_ai_request_model) (rate(${withMatchers('gen_ai_client_operation_time_to_first_chunk_seconds_bucket', matchers({ gen_ai_provider_name: 'tgi', gen_ai_request_model: o.model, service: o.service }))}[${w}])))`,
        note: 'TGI has no TTFT metric: client-side OTel gen_ai.client.operation.time_to_first_chunk',
      },
      { metric: 'error_rate', backend: 'tgi', unit: 'ratio', query: `(sum(rate(${t('tgi_request_failure')}[${w}])) or vector(0)) / (sum(rate(${t('tgi_request_success')}[${w}])) + (sum(rate(${t('tgi_request_failure')}[${w}])) or vector(0)))` },
    );
    missing.push({ metric: 'kv_cache_hit_rate', backend: 'tgi', reason: 'TGI exposes no KV/prefix-cache hit metric' });
  }
  return { plans, missing };
}

/** One DCGM field's series, optionally of one pod or namespace (the heatmap asks all fields at once). */
export function dcgmQuery(field: DcgmField, o: { pod?: string; namespace?: string }): string {
  return withMatchers(field, matchers({ pod: o.pod, namespace: o.namespace }));
}
