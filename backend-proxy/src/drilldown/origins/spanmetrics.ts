/**
 * The drill-down's second origin, `spanmetrics`: Tempo's span metrics in Prometheus (`traces_spanmetrics_*`, pod in
 * `k8s_pod_name`; Tempo mode): estimates behind tail sampling.
 */
import type { FigureProvenance } from '../../../../contract';
import type { PrometheusSource, PromSeries } from '../../sources/prometheus';
import { REQUEST_SPAN_KINDS, spanMetricsQueries } from '../../services/promql';
import { row, toMs, valueOf, type KeyBy, type OriginFigures, type Scope } from '../figures';

/** Tempo's span metrics, rates over `window`. */
export async function spanMetrics(
  prom: PrometheusSource,
  scope: Scope,
  keyBy: KeyBy,
  window: string
): Promise<OriginFigures> {
  const secs = (scope.range.to - scope.range.from) / 1000;
  const byCount = keyBy === 'service' ? ['service', 'k8s_pod_name'] : ['k8s_pod_name'];
  const byQuant = keyBy === 'service' ? ['service'] : ['k8s_pod_name'];
  const qc = spanMetricsQueries({ by: byCount, window, service: scope.service });
  const qq = spanMetricsQueries({ by: byQuant, window, service: scope.service });
  const at = scope.range.to;
  const [calls, errs, p50, p99, p50All, p99All] = await Promise.all(
    [qc.calls, qc.errors, qq.p50, qq.p99, qq.p50All, qq.p99All].map((q) => prom.query(q, at))
  );
  // A span without a pod is booked on its service, as everywhere else (podOrServiceOfSpan).
  const podOf = (s: PromSeries): string => s.metric.k8s_pod_name || scope.service || s.metric.service;
  const keyOf = (s: PromSeries): string | undefined => (keyBy === 'service' ? s.metric.service : podOf(s));
  const isRequest = (s: PromSeries): boolean => new RegExp(`^(${REQUEST_SPAN_KINDS})$`).test(s.metric.span_kind ?? '');
  // Keys that have request spans count only those (a service's requests), the others all of their spans.
  const hasRequests = new Set(calls.filter((s) => isRequest(s) && (valueOf(s) ?? 0) > 0).map(keyOf));
  const counted = (s: PromSeries, k: string): boolean => !hasRequests.has(k) || isRequest(s);
  const out: OriginFigures = new Map();
  const rate: FigureProvenance = {
    origin: 'spanmetrics',
    exact: false,
    note: `Tempo's span metrics (traces_spanmetrics_calls_total) over ${window}: behind the Collector's tail sampling, healthy traffic is estimated from its probabilistic share (counted 1/p times, span_multiplier_key), errors and slow requests are counted exactly; a head sampler that does not mark its spans makes it undercount`,
  };
  const errorsOf: FigureProvenance = {
    origin: 'spanmetrics',
    exact: true,
    note: "error spans (status_code STATUS_CODE_ERROR): the Collector's tail sampling keeps every trace with an error",
  };
  for (const s of calls) {
    const k = keyOf(s);
    const v = valueOf(s);
    if (!k || v === null) continue;
    const f = row(out, k);
    f.spans = (f.spans ?? 0) + v * secs;
    if (!counted(s, k)) continue;
    f.requests = (f.requests ?? 0) + v * secs;
    f.errors ??= 0;
    f.rate = rate;
    f.errorsOf = errorsOf;
    f.pods.add(podOf(s));
  }
  for (const s of errs) {
    const k = keyOf(s);
    const v = valueOf(s);
    if (!k || v === null || !out.has(k) || !counted(s, k)) continue;
    out.get(k)!.errors! += v * secs;
  }
  const latency = (kinds: boolean): FigureProvenance => ({
    origin: 'spanmetrics',
    exact: false,
    note: `interpolated within the buckets of traces_spanmetrics_latency_bucket (${kinds ? 'server/consumer spans' : 'all spans: the service has no server spans'}), sampled healthy traffic weighted`,
  });
  for (const [list, field, kinds] of [
    [p50, 'p50Ms', true],
    [p99, 'p99Ms', true],
    [p50All, 'p50Ms', false],
    [p99All, 'p99Ms', false],
  ] as const) {
    for (const s of list) {
      const k = keyOf(s);
      const v = valueOf(s);
      if (!k || v === null || !out.has(k) || hasRequests.has(k) !== kinds) continue;
      const f = out.get(k)!;
      f[field] = toMs(v);
      f.latency = latency(kinds);
    }
  }
  return out;
}
