/**
 * The drill-down's last resort, `sampled-traces`: a sample of whole traces (Tempo without span metrics): a lower
 * bound, said so on every figure.
 */
import { isFailedSpan, nodeOfSpan, podOfSpan, podOrServiceOfSpan, type Span } from '../../../../contract';
import { quantileOrNull } from '../../services/stats';
import type { TraceSource } from '../../sources/traces';
import { row, type KeyBy, type OriginFigures, type Scope } from '../figures';

/** The spans that stand for a service's requests: its server/consumer spans, or all of its spans if it has none. */
function requestSpans(spans: Span[]): Span[] {
  const srv = spans.filter((s) => s.kind === 'server' || s.kind === 'consumer');
  return srv.length ? srv : spans;
}

/** A sample of whole traces: the last resort (Tempo without span metrics). */
export async function sampledTraces(
  source: TraceSource,
  scope: Scope,
  keyBy: KeyBy
): Promise<{ figures: OriginFigures; traces: number }> {
  const all = await source.spansInWindow(scope.range.from, scope.range.to);
  const spans = scope.service ? all.filter((s) => s.service === scope.service) : all;
  const groups = new Map<string, Span[]>();
  for (const s of spans) {
    const k = keyBy === 'service' ? s.service : podOrServiceOfSpan(s);
    const l = groups.get(k);
    if (l) l.push(s);
    else groups.set(k, [s]);
  }
  const traces = new Set(all.map((s) => s.traceId)).size;
  const note = `a lower bound: from ${traces} trace(s) of the range that ${source.name} returned for a sample, not every request (no span metrics in Prometheus: configure Tempo's metrics generator span_metrics)`;
  const out: OriginFigures = new Map();
  for (const [k, list] of groups) {
    const req = requestSpans(list);
    const d = req.map((s) => s.endMs - s.startMs);
    const f = row(out, k);
    f.spans = list.length;
    f.requests = req.length;
    f.errors = req.filter(isFailedSpan).length;
    f.p50Ms = quantileOrNull(d, 0.5);
    f.p99Ms = quantileOrNull(d, 0.99);
    for (const s of list) {
      const p = podOfSpan(s);
      if (p) f.pods.add(p);
    }
    f.node = list.map(nodeOfSpan).find(Boolean);
    f.rate = { origin: 'sampled-traces', exact: false, note };
    f.errorsOf = { origin: 'sampled-traces', exact: false, note };
    f.latency = {
      origin: 'sampled-traces',
      exact: false,
      note: `from a sample of ${traces} trace(s): percentiles of the sample, not of all requests`,
    };
  }
  return { figures: out, traces };
}
