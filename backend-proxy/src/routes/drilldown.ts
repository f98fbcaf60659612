/**
 * The drill-down: services → pods → a pod's kernel events, plus fault annotations from the chain.
 * Service and pod figures come from spans (the trace source); kernel evidence from every bpf-exporter.
 */
import { Router } from 'express';
import { KernelEventType, type AnnotationsAnswer, type PodKernelEventsAnswer, type PodsAnswer, type ServicesAnswer, type SourceStatus, type Span } from '../../../contract';
import type { ProxyConfig } from '../config';
import { enumParam, numberParam, pathName, timeRange } from '../http/params';
import { eventsFromAll } from '../sources/exporters';
import { settle } from '../sources/http';
import type { Sources } from '../sources';
import { quantileOrNull, round } from './stats';

const podOf = (s: Span): string | undefined => {
  const p = s.resource['k8s.pod.name'] ?? s.attributes['k8s.pod.name'];
  return typeof p === 'string' && p ? p : undefined;
};
const nodeOf = (s: Span): string | undefined => {
  const n = s.resource['k8s.node.name'] ?? s.resource['host.name'];
  return typeof n === 'string' && n ? n : undefined;
};

/** The spans that stand for a service's requests: its server/consumer spans, or all of its spans if it has none. */
function requestSpans(spans: Span[]): Span[] {
  const srv = spans.filter((s) => s.kind === 'server' || s.kind === 'consumer');
  return srv.length ? srv : spans;
}

export function serviceSummaries(spans: Span[], from: number, to: number): ServicesAnswer['services'] {
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
      errors: req.filter((s) => s.status === 'error' || s.status === 'timeout').length,
      rps: round(req.length / secs),
      p50Ms: quantileOrNull(d, 0.5),
      p99Ms: quantileOrNull(d, 0.99),
      pods: [...new Set(list.map(podOf).filter((p): p is string => !!p))].sort(),
    };
  }).sort((a, b) => a.service.localeCompare(b.service));
}

export function drilldownRoutes(_config: ProxyConfig, sources: Sources): Router {
  const r = Router();

  r.get('/services', async (req, res) => {
    const range = timeRange(req.query as Record<string, unknown>);
    const got = await settle(sources.traces.name, () => sources.traces.spansInWindow(range.from, range.to));
    const answer: ServicesAnswer = { ...range, services: serviceSummaries(got.value ?? [], range.from, range.to), sources: [got.status] };
    res.json(answer);
  });

  r.get('/services/:service/pods', async (req, res) => {
    const service = pathName(String(req.params.service), 'service');
    const range = timeRange(req.query as Record<string, unknown>);
    const [got, kern] = await Promise.all([
      settle(sources.traces.name, () => sources.traces.spansInWindow(range.from, range.to)),
      eventsFromAll(sources.exporters, { from: range.from, to: range.to, limit: 50_000 }),
    ]);
    const spans = (got.value ?? []).filter((s) => s.service === service);
    const byPod = new Map<string, Span[]>();
    for (const s of spans) {
      const p = podOf(s) ?? service;
      const l = byPod.get(p);
      if (l) l.push(s); else byPod.set(p, [s]);
    }
    const counts = new Map<string, Record<string, number>>();
    for (const e of kern.events) {
      if (!e.pod) continue;
      const c = counts.get(e.pod) ?? {};
      c[e.type] = (c[e.type] ?? 0) + 1;
      counts.set(e.pod, c);
    }
    // Pods seen only by the kernel probes (no spans yet) are listed too when their name starts with the service.
    for (const pod of counts.keys()) if (!byPod.has(pod) && pod.startsWith(service)) byPod.set(pod, []);
    const pods: PodsAnswer['pods'] = [...byPod.entries()].map(([pod, list]) => {
      const reqs = requestSpans(list);
      const d = reqs.map((s) => s.endMs - s.startMs);
      const node = list.map(nodeOf).find(Boolean) ?? kern.events.find((e) => e.pod === pod && e.node)?.node;
      return {
        pod, ...(node ? { node } : {}), spans: list.length,
        errors: reqs.filter((s) => s.status === 'error' || s.status === 'timeout').length,
        p50Ms: quantileOrNull(d, 0.5), p99Ms: quantileOrNull(d, 0.99), kernelEvents: counts.get(pod) ?? {},
      };
    }).sort((a, b) => a.pod.localeCompare(b.pod));
    const answer: PodsAnswer = { service, ...range, pods, sources: [got.status, ...kern.sources] };
    res.json(answer);
  });

  r.get('/pods/:pod/kernel-events', async (req, res) => {
    const pod = pathName(String(req.params.pod), 'pod');
    const q = req.query as Record<string, unknown>;
    const range = timeRange(q);
    const type = enumParam(q, 'type', KernelEventType.options);
    const limit = numberParam(q, 'limit', 1, 100_000) ?? 5000;
    const kern = await eventsFromAll(sources.exporters, { from: range.from, to: range.to, pod, type, limit });
    const events = kern.events.filter((e) => e.pod === pod && (!type || e.type === type));
    const counts: Record<string, number> = {};
    for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
    const truncated = kern.truncated || events.length > limit;
    const sources_: SourceStatus[] = kern.sources.length ? kern.sources : [{ source: 'bpf-exporter', ok: false, error: 'bpf-exporter: none configured (HOPSCOPE_EXPORTER_URLS)' }];
    const answer: PodKernelEventsAnswer = { pod, ...range, events: events.slice(-limit), counts, dropped: kern.dropped, truncated, sources: sources_ };
    res.json(answer);
  });

  r.get('/annotations', async (req, res) => {
    const range = timeRange(req.query as Record<string, unknown>);
    const chain = sources.chain;
    if (!chain) {
      res.json({ annotations: [], sources: [{ source: 'chain-control', ok: false, error: 'chain-control: not configured (HOPSCOPE_CHAIN_CONTROL_URL)' }] } satisfies AnnotationsAnswer);
      return;
    }
    const got = await settle('chain-control', () => chain.faults());
    const annotations = (got.value?.annotations ?? []).filter((a) => a.startMs <= range.to && (a.endMs ?? Infinity) >= range.from);
    res.json({ annotations, sources: [got.status] } satisfies AnnotationsAnswer);
  });
  return r;
}
