/**
 * The drill-down's first origin, `service-metrics`: the services' own counters in Prometheus
 * (`hopscope_requests_total`, `hopscope_request_duration_seconds`, as the chain's hops expose them): exact counts.
 */
import type { FigureProvenance } from '../../../../contract';
import type { PrometheusSource, PromSeries } from '../../sources/prometheus';
import { serviceMetricsQueries } from '../../services/promql';
import { row, toMs, valueOf, type KeyBy, type OriginFigures, type Scope } from '../figures';

/** The services' own counters: `hopscope_requests_total` and its duration histogram, rates over `window`. */
export async function serviceMetrics(
  prom: PrometheusSource,
  scope: Scope,
  keyBy: KeyBy,
  window: string
): Promise<OriginFigures> {
  const secs = (scope.range.to - scope.range.from) / 1000;
  const byCount = keyBy === 'service' ? ['service', 'pod', 'node'] : ['pod', 'node'];
  const byQuant = keyBy === 'service' ? ['service'] : ['pod'];
  const qc = serviceMetricsQueries({ by: byCount, window, service: scope.service });
  const qq = serviceMetricsQueries({ by: byQuant, window, service: scope.service });
  const at = scope.range.to;
  const [req, err, p50, p99] = await Promise.all([
    prom.query(qc.requests, at),
    prom.query(qc.errors, at),
    prom.query(qq.p50, at),
    prom.query(qq.p99, at),
  ]);
  const out: OriginFigures = new Map();
  const keyOf = (s: PromSeries): string | undefined =>
    keyBy === 'service' ? s.metric.service : s.metric.pod || undefined;
  const rate: FigureProvenance = {
    origin: 'service-metrics',
    exact: true,
    note: `the services' own request counters (hopscope_requests_total), rate over ${window}`,
  };
  const errorsOf: FigureProvenance = {
    origin: 'service-metrics',
    exact: true,
    note: 'answers with a 5xx code, counted by the services (hopscope_requests_total{code=~"5.."})',
  };
  const latency: FigureProvenance = {
    origin: 'service-metrics',
    exact: false,
    note: `interpolated within the buckets of hopscope_request_duration_seconds over ${window}`,
  };
  for (const s of req) {
    const k = keyOf(s);
    const v = valueOf(s);
    if (!k || v === null) continue;
    const f = row(out, k);
    f.requests = (f.requests ?? 0) + v * secs;
    f.errors ??= 0;
    f.rate = rate;
    f.errorsOf = errorsOf;
    if (s.metric.pod) f.pods.add(s.metric.pod);
    if (s.metric.node) f.node ??= s.metric.node;
  }
  for (const s of err) {
    const k = keyOf(s);
    const v = valueOf(s);
    if (!k || v === null || !out.has(k)) continue;
    out.get(k)!.errors! += v * secs;
  }
  for (const [list, field] of [
    [p50, 'p50Ms'],
    [p99, 'p99Ms'],
  ] as const) {
    for (const s of list) {
      const k = keyOf(s);
      const v = valueOf(s);
      if (!k || v === null || !out.has(k)) continue;
      const f = out.get(k)!;
      f[field] = toMs(v);
      f.latency = latency;
    }
  }
  return out;
}
