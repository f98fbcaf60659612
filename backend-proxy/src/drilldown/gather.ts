/**
 * Every origin of the drill-down's figures that applies, asked together, in order of preference (the first that has
 * a figure wins, ./pick.ts): the services' own counters, Tempo's span metrics, the embedded store's ingest counters,
 * and only when nothing counted the requests, a sample of whole traces.
 */
import type { SourceStatus } from '../../../contract';
import { settle } from '../sources/http';
import type { PrometheusSource } from '../sources/prometheus';
import type { TraceSource } from '../sources/traces';
import type { RequestCounters } from '../store/request-counters';
import type { KeyBy, OriginFigures, Scope } from './figures';
import { ingestCounters } from './origins/ingest-counters';
import { sampledTraces } from './origins/sampled-traces';
import { serviceMetrics } from './origins/service-metrics';
import { spanMetrics } from './origins/spanmetrics';
import { rateWindow } from './rate-window';

/** The sources the origins read. */
export interface OriginSources {
  traces: TraceSource;
  prometheus?: PrometheusSource;
  /** The embedded store's ingest counters; used when the embedded store is the trace source. */
  counters?: RequestCounters;
  /** Tempo is the trace source: its span metrics are looked for in Prometheus. */
  tempo?: boolean;
  /** Prometheus' scrape interval (rate windows of at least 4 of them). */
  scrapeMs?: number;
}

/** Every origin that applies, in order of preference, with the statuses and notes of the ones asked. */
export async function gather(
  deps: OriginSources,
  scope: Scope,
  keyBy: KeyBy
): Promise<{ origins: OriginFigures[]; statuses: SourceStatus[]; notes: string[] }> {
  const { traces, prometheus, counters, tempo } = deps;
  const scrapeMs = deps.scrapeMs ?? 15_000;
  const { window, notes: windowNotes } = rateWindow(scope.range, scrapeMs);
  const statuses: SourceStatus[] = [];
  const notes = [...windowNotes];
  const [svc, spm] = await Promise.all([
    prometheus ? settle('prometheus', () => serviceMetrics(prometheus, scope, keyBy, window)) : undefined,
    prometheus && tempo
      ? settle('prometheus (span metrics)', () => spanMetrics(prometheus, scope, keyBy, window))
      : undefined,
  ]);
  const origins: OriginFigures[] = [];
  for (const x of [svc, spm]) {
    if (!x) continue;
    statuses.push(x.status);
    if (x.value) origins.push(x.value);
  }
  if (!prometheus) notes.push("no Prometheus configured: the services' own counters and span metrics cannot be read");
  if (counters && !tempo) {
    const c = ingestCounters(counters, scope, keyBy);
    origins.push(c.figures);
    notes.push(...c.notes);
    statuses.push({ source: traces.name, ok: true, latencyMs: 0 });
  }
  if (tempo && !spm?.value?.size && svc?.value?.size) {
    notes.push(
      "no span metrics (traces_spanmetrics_calls_total) in Prometheus for this range: only services with their own request counters are listed (configure Tempo's metrics generator span_metrics)"
    );
  } else if (tempo && !spm?.value?.size) {
    // Nothing counted anywhere: a sample of traces is all there is; it says so on every figure it gives.
    const got = await settle(traces.name, () => sampledTraces(traces, scope, keyBy));
    statuses.push(got.status);
    if (got.value) {
      origins.push(got.value.figures);
      notes.push(
        `no span metrics (traces_spanmetrics_calls_total) in Prometheus for this range: figures without service metrics come from a sample of ${got.value.traces} trace(s)`
      );
    }
  }
  return { origins, statuses, notes };
}
