/**
 * GET /api/golden — the golden metrics for vLLM and TGI on one time range, with the real exporters' names mapped as in
 * fixtures/metrics/AB-MAPPING.md. TGI has no TTFT metric: its TTFT comes from OTel spans and is labelled so.
 */
import { Router } from 'express';
import { InferenceBackend, type GoldenAnswer, type GoldenMetric, type GoldenSeries, type SourceStatus, type Span } from '../../../contract';
import type { ProxyConfig } from '../config';
import { alignRange, enumParam, nameParam, stepMs, timeRange } from '../http/params';
import { settle } from '../sources/http';
import { matchers, withMatchers } from '../sources/promql';
import type { Sources } from '../sources';
import { quantile } from './stats';

interface Plan { metric: GoldenMetric; backend: 'vllm' | 'tgi'; unit: string; query: string; note?: string; origin?: 'otel' }

export function goldenPlans(o: { backend?: 'vllm' | 'tgi'; model?: string; service?: string; stepMs: number }): { plans: Plan[]; missing: GoldenAnswer['missing'] } {
  const w = `${Math.max(30, Math.ceil((2 * o.stepMs) / 1000))}s`;
  // `service` matches the target label our scrape configs set (the chain's http_sd, k8s service discovery relabels).
  const m = matchers({ model_name: o.model, service: o.service });
  const ts = matchers({ service: o.service });
  const t = (metric: string): string => withMatchers(metric, ts);
  const plans: Plan[] = [];
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

/** TTFT in ms from a span, whichever attribute the instrumentation used. */
export function spanTtftMs(s: Span): number | undefined {
  const a = s.attributes;
  const ms = a['hopscope.ttft_ms'] ?? a['gen_ai.response.time_to_first_token_ms'];
  if (typeof ms === 'number') return ms;
  const sec = a['gen_ai.client.operation.time_to_first_chunk'] ?? a['gen_ai.server.time_to_first_token'] ?? a['gen_ai.response.time_to_first_chunk'];
  if (typeof sec === 'number') return sec * 1000;
  return undefined;
}

export function isBackendSpan(s: Span, backend: 'vllm' | 'tgi'): boolean {
  const p = s.attributes['gen_ai.provider.name'];
  if (typeof p === 'string' && p.toLowerCase() === backend) return true;
  return backend === 'tgi' ? /tgi|text-generation-inference/i.test(s.service) : /vllm/i.test(s.service);
}

/** TGI TTFT P99 per step from spans (OTel/client data), as a series on the same grid as Prometheus. */
export function ttftFromSpans(spans: Span[], from: number, to: number, step: number, model?: string, service?: string): Array<[number, number | null]> {
  const n = Math.floor((to - from) / step) + 1;
  const buckets: number[][] = Array.from({ length: n }, () => []);
  for (const s of spans) {
    if (!isBackendSpan(s, 'tgi')) continue;
    if (model && s.attributes['gen_ai.request.model'] !== model) continue;
    if (service && s.service !== service) continue;
    const v = spanTtftMs(s);
    if (v === undefined) continue;
    const i = Math.floor((s.startMs - from) / step);
    if (i >= 0 && i < n) buckets[i].push(v / 1000);
  }
  return buckets.map((b, i) => [from + i * step, b.length ? quantile(b.sort((x, y) => x - y), 0.99) : null]);
}

export function goldenRoutes(_config: ProxyConfig, sources: Sources): Router {
  const r = Router();
  r.get('/golden', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const asked = timeRange(q);
    const step = stepMs(q, asked);
    const range = alignRange(asked, step);
    const backend = enumParam(q, 'backend', InferenceBackend.options);
    const model = nameParam(q, 'model');
    const service = nameParam(q, 'service');
    const { plans, missing } = goldenPlans({ backend, model, service, stepMs: step });
    const series: GoldenSeries[] = [];
    const statuses: SourceStatus[] = [];
    const prom = sources.prometheus;
    const promWork = prom
      ? settle('prometheus', async () => {
        const results = await Promise.all(plans.map((p) => prom.queryRange(p.query, range.from, range.to, step).then((s) => ({ p, s }), (e: Error) => ({ p, e }))));
        const errors: string[] = [];
        for (const x of results) {
          if ('e' in x) { errors.push(x.e.message); missing.push({ metric: x.p.metric, backend: x.p.backend, reason: x.e.message }); continue; }
          if (!x.s.length) {
            // An absent client TTFT histogram is filled from spans below; the rest is reported missing.
            if (!x.p.origin) missing.push({ metric: x.p.metric, backend: x.p.backend, reason: `no series for ${x.p.query.slice(0, 120)}` });
            continue;
          }
          for (const s of x.s) {
            series.push({ metric: x.p.metric, backend: x.p.backend, labels: s.metric, unit: x.p.unit, origin: x.p.origin ?? 'prometheus', query: x.p.query, ...(x.p.note ? { note: x.p.note } : {}), points: s.points });
          }
        }
        if (errors.length) throw new Error(errors[0].replace(/^prometheus: /, ''));
      })
      : undefined;
    const wantTgiTtft = backend !== 'vllm';
    let spanTtft: GoldenSeries | undefined;
    const spanWork = wantTgiTtft
      ? settle(sources.traces.name, async () => {
        const spans = await sources.traces.spansInWindow(range.from, range.to);
        const points = ttftFromSpans(spans, range.from, range.to, step, model, service);
        if (points.some(([, v]) => v !== null)) {
          spanTtft = { metric: 'ttft_p99_s', backend: 'tgi', labels: {}, unit: 's', origin: 'otel', note: 'TGI has no TTFT metric: P99 of time-to-first-token from OTel spans', points };
        }
      })
      : undefined;
    if (!prom) {
      for (const p of plans) missing.push({ metric: p.metric, backend: p.backend, reason: 'no Prometheus configured' });
    }
    const [ps, ss] = await Promise.all([promWork, spanWork]);
    if (ps) statuses.push(ps.status);
    if (ss) statuses.push(ss.status);
    if (wantTgiTtft && !series.some((x) => x.metric === 'ttft_p99_s' && x.backend === 'tgi')) {
      if (spanTtft) series.push(spanTtft);
      else missing.push({ metric: 'ttft_p99_s', backend: 'tgi', reason: 'TGI has no TTFT metric, and neither the OTel client histogram nor a TGI span with a time-to-first-token attribute has data in this range' });
    }
    const answer: GoldenAnswer = { from: range.from, to: range.to, stepMs: step, series, missing, sources: statuses };
    res.json(answer);
  });
  return r;
}
