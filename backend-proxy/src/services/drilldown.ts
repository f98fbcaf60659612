/**
 * The drill-down: services → pods → a pod's kernel events.
 *
 * Service and pod figures (requests, rate, errors, P50/P99) come from what counts every request, never from the
 * traces a sampler happened to keep. For each figure of each service the first origin that has it wins:
 *   1. `service-metrics`: the services' own counters in Prometheus (`hopscope_requests_total`,
 *      `hopscope_request_duration_seconds`, as the chain's hops expose them): exact counts;
 *   2. `spanmetrics`: Tempo's span metrics in Prometheus (Tempo mode): estimates behind tail sampling;
 *   3. `ingest-counters`: the embedded store's counters of every span received, scaled by the sampling rates the
 *      spans recorded (../store/request-counters);
 *   4. `sampled-traces`: a sample of whole traces (Tempo without span metrics): a lower bound, said so.
 * Every figure carries its origin, whether it is exact, and a note. Traces are fetched only for that last resort;
 * the slowest and failed lists are trace searches of their own (/api/traces). Kernel evidence: every bpf-exporter.
 */
import {
  isFailedSpan,
  nodeOfSpan,
  podOfSpan,
  podOrServiceOfSpan,
  type FigureProvenance,
  type FigureSources,
  type KernelEvent,
  type KernelEventType,
  type PodKernelEventsAnswer,
  type PodsAnswer,
  type PodSummary,
  type ServicesAnswer,
  type ServiceSummary,
  type SourceStatus,
  type Span,
} from '../../../contract';
import type { TimeRange } from '../http/params';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { settle } from '../sources/http';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';
import type { TraceSource } from '../sources/traces';
import { histQuantile, mergeHist, type CountsRow, type RequestCounters } from '../store/request-counters';
import { promDuration, REQUEST_SPAN_KINDS, serviceMetricsQueries, spanMetricsQueries } from './promql';
import { quantileOrNull, round } from './stats';

/** The spans that stand for a service's requests: its server/consumer spans, or all of its spans if it has none. */
function requestSpans(spans: Span[]): Span[] {
  const srv = spans.filter((s) => s.kind === 'server' || s.kind === 'consumer');
  return srv.length ? srv : spans;
}

/** Kernel events counted by type. */
export function countByType(events: KernelEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  return counts;
}

/** One origin's figures for one row (a service, or a pod of one service). Absent figures: this origin lacks them. */
interface Figures {
  requests?: number;
  errors?: number;
  p50Ms?: number | null;
  p99Ms?: number | null;
  /** Spans the trace source received for the row. */
  spans?: number;
  pods: Set<string>;
  node?: string;
  rate?: FigureProvenance;
  errorsOf?: FigureProvenance;
  latency?: FigureProvenance;
}

/** One origin's answer: figures per row key. */
type OriginFigures = Map<string, Figures>;

const row = (m: OriginFigures, key: string): Figures => {
  let f = m.get(key);
  if (!f) m.set(key, (f = { pods: new Set() }));
  return f;
};

const valueOf = (s: PromSeries): number | null => s.points[0]?.[1] ?? null;
const toMs = (sec: number | null): number | null => (sec === null ? null : round(sec * 1000, 1));

const pct = (part: number, whole: number): string => `${whole ? Math.round((100 * part) / whole) : 0}%`;

/** How the counts of a window are scoped: by service (the services list) or by pod (one service's pods). */
interface Scope {
  service?: string;
  range: TimeRange;
}

export interface DrilldownDeps {
  traces: TraceSource;
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
  prometheus?: PrometheusSource;
  /** The embedded store's ingest counters; used when the embedded store is the trace source. */
  counters?: RequestCounters;
  /** Tempo is the trace source: its span metrics are looked for in Prometheus. */
  tempo?: boolean;
  /** Prometheus' scrape interval (rate windows of at least 4 of them). */
  scrapeMs?: number;
}

export class DrilldownService {
  private traces: TraceSource;
  private exporters: ExporterSource[];
  private scrapeMs: number;

  constructor(private deps: DrilldownDeps) {
    this.traces = deps.traces;
    this.exporters = deps.exporters;
    this.scrapeMs = deps.scrapeMs ?? 15_000;
  }

  /** The rate window for a range: the range itself, but at least 4 scrape intervals (`$__rate_interval`'s floor). */
  private window(range: TimeRange): { window: string; notes: string[] } {
    const span = range.to - range.from;
    const min = 4 * this.scrapeMs;
    const notes =
      span < min
        ? [
            `the range (${Math.round(span / 1000)} s) is shorter than 4 scrape intervals: Prometheus rates are taken over the last ${Math.round(min / 1000)} s`,
          ]
        : [];
    return { window: promDuration(Math.max(span, min)), notes };
  }

  /** 1. The services' own counters: `hopscope_requests_total` and its duration histogram. */
  private async serviceMetrics(scope: Scope, keyBy: 'service' | 'pod'): Promise<OriginFigures> {
    const prom = this.deps.prometheus!;
    const { window } = this.window(scope.range);
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

  /** 2. Tempo's span metrics (`traces_spanmetrics_*`, pod in `k8s_pod_name`). */
  private async spanMetrics(scope: Scope, keyBy: 'service' | 'pod'): Promise<OriginFigures> {
    const prom = this.deps.prometheus!;
    const { window } = this.window(scope.range);
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
    const isRequest = (s: PromSeries): boolean =>
      new RegExp(`^(${REQUEST_SPAN_KINDS})$`).test(s.metric.span_kind ?? '');
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

  /** 3. The embedded store's counters of every span received. */
  private ingestCounters(scope: Scope, keyBy: 'service' | 'pod'): { figures: OriginFigures; notes: string[] } {
    const counters = this.deps.counters!;
    const rows = counters.window(scope.range.from, scope.range.to, scope.service);
    const groups = new Map<string, CountsRow[]>();
    for (const r of rows) {
      const k = keyBy === 'service' ? r.service : r.pod;
      const l = groups.get(k);
      if (l) l.push(r);
      else groups.set(k, [r]);
    }
    const out: OriginFigures = new Map();
    for (const [k, list] of groups) {
      const req = list.some((r) => r.request) ? list.filter((r) => r.request) : list;
      const f = row(out, k);
      let requests = 0,
        errors = 0,
        spansCounted = 0,
        scaled = 0,
        errorSpans = 0,
        scaledErrors = 0,
        zero = 0;
      const hist = new Map<number, number>();
      for (const r of req) {
        requests += r.requests;
        errors += r.errors;
        spansCounted += r.spans;
        scaled += r.scaledSpans;
        errorSpans += r.errorSpans;
        scaledErrors += r.scaledErrors;
        zero += r.zero;
        mergeHist(hist, r.hist);
      }
      f.spans = list.reduce((n, r) => n + r.spans, 0);
      f.requests = requests;
      f.errors = errors;
      f.p50Ms = toMs(nullableSec(histQuantile(hist, zero, 0.5)));
      f.p99Ms = toMs(nullableSec(histQuantile(hist, zero, 0.99)));
      for (const r of list) f.pods.add(r.pod);
      f.node = list.find((r) => r.node)?.node;
      const kinds = list.some((r) => r.request)
        ? 'server/consumer spans'
        : 'all spans (the service has no server spans)';
      f.rate =
        scaled < 0.5
          ? {
              origin: 'ingest-counters',
              exact: true,
              note: `counted at ingest: every ${kinds.replace(/^all spans/, 'span')} the store received; none carried a sampling rate (a sampler that records none would make this undercount)`,
            }
          : {
              origin: 'ingest-counters',
              exact: false,
              note: `counted at ingest, ${pct(scaled, spansCounted)} of the ${kinds} scaled by the sampling rate recorded on them (hopscope.sampler.rate, hopscope.sampling.probability): an estimate`,
            };
      f.errorsOf =
        scaledErrors < 0.5
          ? {
              origin: 'ingest-counters',
              exact: true,
              note: "every failed span received: samplers keep failed requests (the chain's KeepErrorsSpanProcessor, the Collector's errors policy)",
            }
          : {
              origin: 'ingest-counters',
              exact: false,
              note: `${pct(scaledErrors, errorSpans)} of the failed spans scaled by the Collector's sampling probability`,
            };
      f.latency = {
        origin: 'ingest-counters',
        exact: false,
        note: 'from a histogram of every span received (2% wide buckets), sampled spans weighted by their recorded rate',
      };
    }
    const notes: string[] = [];
    const reach = Date.now() - counters.retentionMs;
    if (scope.range.from < reach)
      notes.push(
        `the ingest counters reach back ${Math.round(counters.retentionMs / 60_000)} min (HOPSCOPE_STORE_MAX_AGE_MS): requests before ${new Date(reach).toISOString()} are not counted`
      );
    return { figures: out, notes };
  }

  /** 4. A sample of whole traces: the last resort (Tempo without span metrics). */
  private async sampledTraces(
    scope: Scope,
    keyBy: 'service' | 'pod'
  ): Promise<{ figures: OriginFigures; traces: number }> {
    const all = await this.traces.spansInWindow(scope.range.from, scope.range.to);
    const spans = scope.service ? all.filter((s) => s.service === scope.service) : all;
    const groups = new Map<string, Span[]>();
    for (const s of spans) {
      const k = keyBy === 'service' ? s.service : podOrServiceOfSpan(s);
      const l = groups.get(k);
      if (l) l.push(s);
      else groups.set(k, [s]);
    }
    const traces = new Set(all.map((s) => s.traceId)).size;
    const note = `a lower bound: from ${traces} trace(s) of the range that ${this.traces.name} returned for a sample, not every request (no span metrics in Prometheus: configure Tempo's metrics generator span_metrics)`;
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

  /** Every origin that applies, in order of preference, with the statuses and notes of the ones asked. */
  private async gather(
    scope: Scope,
    keyBy: 'service' | 'pod'
  ): Promise<{ origins: OriginFigures[]; statuses: SourceStatus[]; notes: string[] }> {
    const { prometheus, counters, tempo } = this.deps;
    const statuses: SourceStatus[] = [];
    const notes = [...this.window(scope.range).notes];
    const [svc, spm] = await Promise.all([
      prometheus ? settle('prometheus', () => this.serviceMetrics(scope, keyBy)) : undefined,
      prometheus && tempo ? settle('prometheus (span metrics)', () => this.spanMetrics(scope, keyBy)) : undefined,
    ]);
    const origins: OriginFigures[] = [];
    for (const x of [svc, spm]) {
      if (!x) continue;
      statuses.push(x.status);
      if (x.value) origins.push(x.value);
    }
    if (!prometheus) notes.push("no Prometheus configured: the services' own counters and span metrics cannot be read");
    if (counters && !tempo) {
      const c = this.ingestCounters(scope, keyBy);
      origins.push(c.figures);
      notes.push(...c.notes);
      statuses.push({ source: this.traces.name, ok: true, latencyMs: 0 });
    }
    if (tempo && !spm?.value?.size && svc?.value?.size) {
      notes.push(
        "no span metrics (traces_spanmetrics_calls_total) in Prometheus for this range: only services with their own request counters are listed (configure Tempo's metrics generator span_metrics)"
      );
    } else if (tempo && !spm?.value?.size) {
      // Nothing counted anywhere: a sample of traces is all there is; it says so on every figure it gives.
      const got = await settle(this.traces.name, () => this.sampledTraces(scope, keyBy));
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

  /** The first origin's figure for each field. */
  private static pick(
    key: string,
    origins: OriginFigures[]
  ): { f: Required<Pick<Figures, 'requests' | 'errors'>> & Figures; figures: FigureSources } | undefined {
    const has = origins.map((o) => o.get(key));
    const rateFrom = has.find((f) => f?.requests !== undefined && f.rate);
    if (!rateFrom) return undefined;
    const errFrom = has.find((f) => f?.errors !== undefined && f.errorsOf) ?? rateFrom;
    const latFrom = has.find((f) => f?.latency && (f.p50Ms != null || f.p99Ms != null)) ?? rateFrom;
    const spans = has.find((f) => f?.spans !== undefined)?.spans ?? 0;
    const node = has.find((f) => f?.node)?.node;
    const latency: FigureProvenance = latFrom.latency ?? {
      origin: rateFrom.rate!.origin,
      exact: false,
      note: 'no latency histogram for this row',
    };
    return {
      f: {
        ...rateFrom,
        requests: rateFrom.requests!,
        errors: errFrom.errors ?? 0,
        p50Ms: latFrom.p50Ms ?? null,
        p99Ms: latFrom.p99Ms ?? null,
        spans,
        node,
      },
      figures: { rate: rateFrom.rate!, errors: errFrom.errorsOf ?? rateFrom.errorsOf!, latency },
    };
  }

  async services(range: TimeRange): Promise<ServicesAnswer> {
    const { origins, statuses, notes } = await this.gather({ range }, 'service');
    const secs = Math.max(1e-3, (range.to - range.from) / 1000);
    const keys = new Set(origins.flatMap((o) => [...o.keys()]));
    const services: ServiceSummary[] = [];
    for (const service of keys) {
      const p = DrilldownService.pick(service, origins);
      if (!p) continue;
      const { f } = p;
      const requests = round(f.requests, 2);
      const errors = Math.round(f.errors);
      services.push({
        service,
        spans: Math.round(f.spans ?? 0),
        errors,
        requests,
        rps: round(f.requests / secs),
        errorRate: f.requests > 0 ? round(Math.min(1, f.errors / f.requests), 4) : null,
        p50Ms: f.p50Ms ?? null,
        p99Ms: f.p99Ms ?? null,
        pods: [...f.pods].sort(),
        figures: p.figures,
      });
    }
    services.sort((a, b) => a.service.localeCompare(b.service));
    return { ...range, services, notes, sources: statuses };
  }

  async pods(service: string, range: TimeRange): Promise<PodsAnswer> {
    const [g, kern] = await Promise.all([
      this.gather({ range, service }, 'pod'),
      eventsFromAll(this.exporters, { from: range.from, to: range.to, limit: 50_000 }),
    ]);
    const secs = Math.max(1e-3, (range.to - range.from) / 1000);
    const byPodEvents = new Map<string, KernelEvent[]>();
    for (const e of kern.events) {
      if (!e.pod) continue;
      const l = byPodEvents.get(e.pod);
      if (l) l.push(e);
      else byPodEvents.set(e.pod, [e]);
    }
    const keys = new Set(g.origins.flatMap((o) => [...o.keys()]));
    const pods: PodSummary[] = [];
    for (const pod of keys) {
      const p = DrilldownService.pick(pod, g.origins);
      if (!p) continue;
      const { f } = p;
      const node = f.node ?? kern.events.find((e) => e.pod === pod && e.node)?.node;
      pods.push({
        pod,
        ...(node ? { node } : {}),
        spans: Math.round(f.spans ?? 0),
        errors: Math.round(f.errors),
        requests: round(f.requests, 2),
        rps: round(f.requests / secs),
        errorRate: f.requests > 0 ? round(Math.min(1, f.errors / f.requests), 4) : null,
        p50Ms: f.p50Ms ?? null,
        p99Ms: f.p99Ms ?? null,
        kernelEvents: countByType(byPodEvents.get(pod) ?? []),
        figures: p.figures,
      });
    }
    // Pods seen only by the kernel probes (no requests recorded anywhere) are listed too when their name starts with the service.
    for (const pod of byPodEvents.keys()) {
      if (keys.has(pod) || !pod.startsWith(service)) continue;
      const node = kern.events.find((e) => e.pod === pod && e.node)?.node;
      pods.push({
        pod,
        ...(node ? { node } : {}),
        spans: 0,
        errors: 0,
        requests: 0,
        rps: 0,
        errorRate: null,
        p50Ms: null,
        p99Ms: null,
        kernelEvents: countByType(byPodEvents.get(pod)!),
      });
    }
    pods.sort((a, b) => a.pod.localeCompare(b.pod));
    return { service, ...range, pods, notes: g.notes, sources: [...g.statuses, ...kern.sources] };
  }

  async kernelEvents(pod: string, q: KernelEventsQuery): Promise<PodKernelEventsAnswer> {
    const { range, type, limit } = q;
    const kern = await eventsFromAll(this.exporters, { from: range.from, to: range.to, pod, type, limit });
    const events = kern.events.filter((e) => e.pod === pod && (!type || e.type === type));
    const truncated = kern.truncated || events.length > limit;
    const sources: SourceStatus[] = kern.sources.length
      ? kern.sources
      : [{ source: 'bpf-exporter', ok: false, error: 'bpf-exporter: none configured (HOPSCOPE_EXPORTER_URLS)' }];
    return {
      pod,
      ...range,
      events: events.slice(-limit),
      counts: countByType(events),
      dropped: kern.dropped,
      truncated,
      sources,
    };
  }
}

interface KernelEventsQuery {
  range: TimeRange;
  type?: KernelEventType;
  limit: number;
}

/** The histogram reads ms; `toMs` takes seconds. */
const nullableSec = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
