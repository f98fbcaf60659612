/**
 * The golden metrics for vLLM, TGI and SGLang on one time range: the catalogue's queries (./promql) against
 * Prometheus — on an older release's metric names when the current ones have no series (each series names the metric
 * names it was read from) —, and TGI's TTFT from OTel spans when no client histogram has data (TGI has no TTFT metric;
 * such series say so).
 */
import {
  ttftMsOfSpan,
  type GoldenAnswer,
  type GoldenSeries,
  type InferenceBackend,
  type SourceStatus,
  type Span,
} from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import { settle } from '../sources/http';
import type { PrometheusSource } from '../sources/prometheus';
import type { TraceSource } from '../sources/traces';
import { isBackendSpan } from './inference-spans';
import { goldenPlans, type GoldenPlan } from './promql';
import { quantile } from './stats';

export interface GoldenQuery {
  range: TimeRange;
  stepMs: number;
  backend?: InferenceBackend;
  model?: string;
  service?: string;
}

/** TGI TTFT P99 per step from spans (OTel/client data), as a series on the same grid as Prometheus. */
function ttftFromSpans(
  spans: Span[],
  from: number,
  to: number,
  step: number,
  model?: string,
  service?: string
): Array<[number, number | null]> {
  const n = Math.floor((to - from) / step) + 1;
  const buckets: number[][] = Array.from({ length: n }, () => []);
  for (const s of spans) {
    if (!isBackendSpan(s, 'tgi')) continue;
    if (model && s.attributes['gen_ai.request.model'] !== model) continue;
    if (service && s.service !== service) continue;
    const v = ttftMsOfSpan(s);
    if (v === undefined) continue;
    const i = Math.floor((s.startMs - from) / step);
    if (i >= 0 && i < n) buckets[i].push(v / 1000);
  }
  return buckets.map((b, i) => [
    from + i * step,
    b.length
      ? quantile(
          b.sort((x, y) => x - y),
          0.99
        )
      : null,
  ]);
}

export class GoldenService {
  /** `scrapeMs`: Prometheus' scrape interval, for the rate windows (./promql `rateIntervalMs`). */
  constructor(
    private prometheus: PrometheusSource | undefined,
    private traces: TraceSource,
    private scrapeMs?: number
  ) {}

  async query(q: GoldenQuery): Promise<GoldenAnswer> {
    const { range, stepMs: step, backend, model, service } = q;
    const { plans, missing } = goldenPlans({ backend, model, service, stepMs: step, scrapeMs: this.scrapeMs });
    const series: GoldenSeries[] = [];
    const statuses: SourceStatus[] = [];
    const prom = this.prometheus;
    const promWork = prom
      ? settle('prometheus', async () => {
          // The current names first; an older release's (the plan's fallbacks) only when those have no series.
          const ask = async (p: GoldenPlan) => {
            const variants = [{ query: p.query, metricNames: p.metricNames }, ...(p.fallbacks ?? [])];
            for (const [i, v] of variants.entries()) {
              const s = await prom.queryRange(v.query, range.from, range.to, step);
              if (s.length || i === variants.length - 1)
                return { p: { ...p, ...v }, s, tried: variants.slice(0, i + 1).flatMap((x) => x.metricNames) };
            }
            throw new Error('unreachable');
          };
          const results = await Promise.all(plans.map((p) => ask(p).catch((e: Error) => ({ p, e }))));
          const errors: string[] = [];
          for (const x of results) {
            if ('e' in x) {
              errors.push(x.e.message);
              missing.push({ metric: x.p.metric, backend: x.p.backend, reason: x.e.message });
              continue;
            }
            if (!x.s.length) {
              // An absent client TTFT histogram is filled from spans below; the rest is reported missing.
              if (!x.p.origin)
                missing.push({
                  metric: x.p.metric,
                  backend: x.p.backend,
                  reason: x.p.fallbacks?.length
                    ? `no series for any of ${x.tried.join(', ')}`
                    : `no series for ${x.p.query.slice(0, 120)}`,
                });
              continue;
            }
            for (const s of x.s) {
              series.push({
                metric: x.p.metric,
                backend: x.p.backend,
                labels: s.metric,
                unit: x.p.unit,
                origin: x.p.origin ?? 'prometheus',
                query: x.p.query,
                metricNames: x.p.metricNames,
                ...(x.p.note ? { note: x.p.note } : {}),
                points: s.points,
              });
            }
          }
          if (errors.length) throw new Error(errors[0].replace(/^prometheus: /, ''));
        })
      : undefined;
    const wantTgiTtft = !backend || backend === 'tgi';
    let spanTtft: GoldenSeries | undefined;
    const spanWork = wantTgiTtft
      ? settle(this.traces.name, async () => {
          const spans = await this.traces.spansInWindow(range.from, range.to);
          const points = ttftFromSpans(spans, range.from, range.to, step, model, service);
          if (points.some(([, v]) => v !== null)) {
            spanTtft = {
              metric: 'ttft_p99_s',
              backend: 'tgi',
              labels: {},
              unit: 's',
              origin: 'otel',
              note: 'TGI has no TTFT metric: P99 of time-to-first-token from OTel spans',
              points,
            };
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
      else
        missing.push({
          metric: 'ttft_p99_s',
          backend: 'tgi',
          reason:
            'TGI has no TTFT metric, and neither the OTel client histogram nor a TGI span with a time-to-first-token attribute has data in this range',
        });
    }
    return { from: range.from, to: range.to, stepMs: step, series, missing, sources: statuses };
  }
}
