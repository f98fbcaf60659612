/**
 * The drill-down: services → pods → a pod's kernel events.
 *
 * Service and pod figures (requests, rate, errors, P50/P99) come from what counts every request, never from the
 * traces a sampler happened to keep. For each figure of each service the first origin that has it wins (./gather.ts,
 * one origin a file under ./origins):
 *   1. `service-metrics`: the services' own counters in Prometheus (`hopscope_requests_total`,
 *      `hopscope_request_duration_seconds`, as the chain's hops expose them): exact counts;
 *   2. `spanmetrics`: Tempo's span metrics in Prometheus (Tempo mode): estimates behind tail sampling;
 *   3. `ingest-counters`: the embedded store's counters of every span received, scaled by the sampling rates the
 *      spans recorded (../store/request-counters);
 *   4. `sampled-traces`: a sample of whole traces (Tempo without span metrics): a lower bound, said so.
 * Every figure carries its origin, whether it is exact, and a note. Traces are fetched only for that last resort;
 * the slowest and failed lists are trace searches of their own (/api/traces). Kernel evidence: every bpf-exporter.
 */
import type {
  KernelEvent,
  KernelEventType,
  PodKernelEventsAnswer,
  PodsAnswer,
  PodSummary,
  ServicesAnswer,
  ServiceSummary,
  SourceStatus,
} from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import { round } from '../services/stats';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { gather, type OriginSources } from './gather';
import { countByType } from './kernel-counts';
import { pick } from './pick';

export interface DrilldownDeps extends OriginSources {
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
}

export class DrilldownService {
  constructor(private deps: DrilldownDeps) {}

  async services(range: TimeRange): Promise<ServicesAnswer> {
    const { origins, statuses, notes } = await gather(this.deps, { range }, 'service');
    const secs = Math.max(1e-3, (range.to - range.from) / 1000);
    const keys = new Set(origins.flatMap((o) => [...o.keys()]));
    const services: ServiceSummary[] = [];
    for (const service of keys) {
      const p = pick(service, origins);
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
      gather(this.deps, { range, service }, 'pod'),
      eventsFromAll(this.deps.exporters, { from: range.from, to: range.to, limit: 50_000 }),
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
      const p = pick(pod, g.origins);
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
    const kern = await eventsFromAll(this.deps.exporters, { from: range.from, to: range.to, pod, type, limit });
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
