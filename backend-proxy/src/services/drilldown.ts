/**
 * The drill-down: services → pods → a pod's kernel events. Service and pod figures come from spans (the trace
 * source); kernel evidence from every bpf-exporter.
 */
import { isFailedSpan, nodeOfSpan, podOfSpan, podOrServiceOfSpan, type KernelEvent, type KernelEventType, type PodKernelEventsAnswer, type PodsAnswer, type ServicesAnswer, type SourceStatus, type Span } from '../../../contract';
import type { TimeRange } from '../http/params';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { settle } from '../sources/http';
import type { TraceSource } from '../sources/traces';
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

function serviceSummaries(spans: Span[], from: number, to: number): ServicesAnswer['services'] {
  const by = new Map<string, Span[]>();
  for (const s of spans) {
    const l = by.get(s.service);
    if (l) l.push(s); else by.set(s.service, [s]);
  }
  const secs = Math.max(1, (to - from) / 1000);
  return [...by.entries()].map(([service, list]) => {
    const req = requestSpans(list);
    const d = req.map((s) => s.endMs - s.startMs);
    return {
      service,
      spans: list.length,
      errors: req.filter(isFailedSpan).length,
      rps: round(req.length / secs),
      p50Ms: quantileOrNull(d, 0.5),
      p99Ms: quantileOrNull(d, 0.99),
      pods: [...new Set(list.map(podOfSpan).filter((p): p is string => !!p))].sort(),
    };
  }).sort((a, b) => a.service.localeCompare(b.service));
}

interface KernelEventsQuery { range: TimeRange; type?: KernelEventType; limit: number }

export class DrilldownService {
  /** `exporters` is the live list (DNS discovery updates it in place). */
  constructor(private traces: TraceSource, private exporters: ExporterSource[]) {}

  async services(range: TimeRange): Promise<ServicesAnswer> {
    const got = await settle(this.traces.name, () => this.traces.spansInWindow(range.from, range.to));
    return { ...range, services: serviceSummaries(got.value ?? [], range.from, range.to), sources: [got.status] };
  }

  async pods(service: string, range: TimeRange): Promise<PodsAnswer> {
    const [got, kern] = await Promise.all([
      settle(this.traces.name, () => this.traces.spansInWindow(range.from, range.to)),
      eventsFromAll(this.exporters, { from: range.from, to: range.to, limit: 50_000 }),
    ]);
    const spans = (got.value ?? []).filter((s) => s.service === service);
    const byPod = new Map<string, Span[]>();
    for (const s of spans) {
      const p = podOrServiceOfSpan(s);
      const l = byPod.get(p);
      if (l) l.push(s); else byPod.set(p, [s]);
    }
    const byPodEvents = new Map<string, KernelEvent[]>();
    for (const e of kern.events) {
      if (!e.pod) continue;
      const l = byPodEvents.get(e.pod);
      if (l) l.push(e); else byPodEvents.set(e.pod, [e]);
    }
    // Pods seen only by the kernel probes (no spans yet) are listed too when their name starts with the service.
    for (const pod of byPodEvents.keys()) if (!byPod.has(pod) && pod.startsWith(service)) byPod.set(pod, []);
    const pods: PodsAnswer['pods'] = [...byPod.entries()].map(([pod, list]) => {
      const reqs = requestSpans(list);
      const d = reqs.map((s) => s.endMs - s.startMs);
      const node = list.map(nodeOfSpan).find(Boolean) ?? kern.events.find((e) => e.pod === pod && e.node)?.node;
      return {
        pod, ...(node ? { node } : {}), spans: list.length,
        errors: reqs.filter(isFailedSpan).length,
        p50Ms: quantileOrNull(d, 0.5), p99Ms: quantileOrNull(d, 0.99), kernelEvents: countByType(byPodEvents.get(pod) ?? []),
      };
    }).sort((a, b) => a.pod.localeCompare(b.pod));
    return { service, ...range, pods, sources: [got.status, ...kern.sources] };
  }

  async kernelEvents(pod: string, q: KernelEventsQuery): Promise<PodKernelEventsAnswer> {
    const { range, type, limit } = q;
    const kern = await eventsFromAll(this.exporters, { from: range.from, to: range.to, pod, type, limit });
    const events = kern.events.filter((e) => e.pod === pod && (!type || e.type === type));
    const truncated = kern.truncated || events.length > limit;
    const sources: SourceStatus[] = kern.sources.length ? kern.sources : [{ source: 'bpf-exporter', ok: false, error: 'bpf-exporter: none configured (HOPSCOPE_EXPORTER_URLS)' }];
    return { pod, ...range, events: events.slice(-limit), counts: countByType(events), dropped: kern.dropped, truncated, sources };
  }
}
