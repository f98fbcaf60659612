/**
 * Services and pods → table frames: one row each, the name linking to its drill-down (the path in a hidden field,
 * see links.ts), latencies in ms, and the kernel signals the exporters counted (labels from KERNEL_EVENT_TYPES).
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import { appPaths } from '../../../contract/app-urls';
import { KERNEL_EVENT_TYPES, type FigureSources, type KernelEventType, type PodsAnswer, type ServicesAnswer } from '../../../contract';
import { field, frame, NUMBER, STRING } from './frame';
import { appPathLink, HIDDEN } from './links';

/** Kernel signal counts as one short cell: `TLS 12 · retrans 3 · GPU alloc fail 1` (traced requests left out). */
export function kernelCell(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([k, v]) => v > 0 && k !== 'http_traceparent' && k in KERNEL_EVENT_TYPES)
    .map(([k, v]) => `${KERNEL_EVENT_TYPES[k as KernelEventType].short} ${v}`);
  return parts.length ? parts.join(' · ') : 'none';
}

const total = (counts: Record<string, number>): number =>
  Object.entries(counts).reduce((n, [k, v]) => (k === 'http_traceparent' ? n : n + v), 0);

/** @param kernel per service, the summed kernel-event counts of its pods (undefined: not asked). */
export function servicesFrame(answer: ServicesAnswer, kernel?: Record<string, Record<string, number>>): DataFrame {
  const s = answer.services;
  return frame(
    [
      field('service', STRING, s.map((x) => x.service), { displayName: 'Service', links: [appPathLink('Open service', 'servicePath')] }),
      field('servicePath', STRING, s.map((x) => appPaths.service(x.service)), HIDDEN),
      field('requests', NUMBER, s.map((x) => x.requests), { displayName: 'Requests', decimals: 0 }),
      field('rps', NUMBER, s.map((x) => x.rps), { displayName: 'RPS', unit: 'reqps', decimals: 2 }),
      field('errorRate', NUMBER, s.map((x) => x.errorRate), { displayName: 'Error rate', unit: 'percentunit', decimals: 1 }),
      // Each latency on its own scale (a bar of P99 is not drawn against the request counts).
      field('p50', NUMBER, s.map((x) => x.p50Ms), { displayName: 'P50', unit: 'ms', fieldMinMax: true }),
      field('p99', NUMBER, s.map((x) => x.p99Ms), { displayName: 'P99', unit: 'ms', fieldMinMax: true, links: [appPathLink('Open service', 'servicePath')] }),
      field('errors', NUMBER, s.map((x) => x.errors), { displayName: 'Errors', decimals: 0 }),
      field('pods', NUMBER, s.map((x) => x.pods.length), { displayName: 'Pods', decimals: 0 }),
      ...(kernel ? [field('kernel', STRING, s.map((x) => (kernel[x.service] ? kernelCell(kernel[x.service]) : 'unavailable')), { displayName: 'Kernel signals' })] : []),
    ],
    { name: 'services' }
  );
}

export function podsFrame(answer: PodsAnswer): DataFrame {
  const p = answer.pods;
  return frame(
    [
      field('pod', STRING, p.map((x) => x.pod), { displayName: 'Pod', links: [appPathLink('Kernel evidence of this pod', 'podPath')] }),
      field('podPath', STRING, p.map((x) => appPaths.pod(answer.service, x.pod)), HIDDEN),
      field('node', STRING, p.map((x) => x.node ?? ''), { displayName: 'Node' }),
      field('requests', NUMBER, p.map((x) => x.requests), { displayName: 'Requests', decimals: 0 }),
      field('rps', NUMBER, p.map((x) => x.rps), { displayName: 'RPS', unit: 'reqps', decimals: 2 }),
      field('errorRate', NUMBER, p.map((x) => x.errorRate), { displayName: 'Error rate', unit: 'percentunit', decimals: 1 }),
      field('p50', NUMBER, p.map((x) => x.p50Ms), { displayName: 'P50', unit: 'ms' }),
      field('p99', NUMBER, p.map((x) => x.p99Ms), { displayName: 'P99', unit: 'ms' }),
      field('errors', NUMBER, p.map((x) => x.errors), { displayName: 'Errors', decimals: 0 }),
      field('kernel', STRING, p.map((x) => kernelCell(x.kernelEvents)), { displayName: 'Kernel signals' }),
      field('kernelEvents', NUMBER, p.map((x) => total(x.kernelEvents)), { displayName: 'Kernel events', decimals: 0 }),
    ],
    { name: `pods of ${answer.service}` }
  );
}

/** Each service's pods' kernel-event counts, summed per service (from one pods answer per service). */
export function kernelByService(answers: PodsAnswer[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const a of answers) {
    const sum: Record<string, number> = {};
    for (const p of a.pods) {
      for (const [k, v] of Object.entries(p.kernelEvents)) {
        sum[k] = (sum[k] ?? 0) + v;
      }
    }
    out[a.service] = sum;
  }
  return out;
}

const FIGURE_NAMES: Record<keyof FigureSources, string> = { rate: 'Requests and RPS', errors: 'Errors', latency: 'P50 and P99' };

/**
 * What the reader must know about these figures: the answer's caveats, and each figure that is an estimate rather
 * than a count (from sampled traces, an interpolated percentile…), with the proxy's reason.
 */
export function figureNotices(answer: { notes: string[] }, rows: Array<{ figures?: FigureSources }>): QueryResultMetaNotice[] {
  const seen = new Set<string>();
  const out: QueryResultMetaNotice[] = answer.notes.map((text) => ({ severity: 'info', text }));
  for (const r of rows) {
    for (const key of Object.keys(FIGURE_NAMES) as Array<keyof FigureSources>) {
      const f = r.figures?.[key];
      const text = f && !f.exact ? `${FIGURE_NAMES[key]} are estimates (${f.origin}${f.note ? `: ${f.note}` : ''}).` : undefined;
      if (text && !seen.has(text)) {
        seen.add(text);
        out.push({ severity: 'info', text });
      }
    }
  }
  return out;
}
