/**
 * Services and pods → table frames: one row each, the name linking to its drill-down (the path in a hidden field,
 * see links.ts), requests, errors over requests, latencies in ms, where each figure comes from (a `Source` column that
 * says which figures are estimates: sampled traces, interpolated percentiles…) and the kernel signals the exporters
 * counted (labels from KERNEL_EVENT_TYPES).
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import { appPaths } from '../../../contract/app-urls';
import {
  KERNEL_EVENT_TYPES,
  type FigureOrigin,
  type FigureSources,
  type KernelEventType,
  type PodsAnswer,
  type ServicesAnswer,
} from '../../../contract';
import { columns, field, frame, NUMBER, STRING } from './frame';
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

interface FigureRow {
  requests: number;
  rps: number;
  errors: number;
  errorRate: number | null;
  figures?: FigureSources;
}

/**
 * Requests, RPS, errors and the error rate (errors over requests: `spans` counts spans of every kind, so it is never
 * the denominator), each column described with where its figure comes from.
 */
function figureFields(rows: FigureRow[]) {
  return columns(rows, [
    [
      'requests',
      NUMBER,
      (x) => x.requests,
      { displayName: 'Requests', decimals: 0, description: figureDescription('rate', rows), custom: { width: 90 } },
    ],
    [
      'rps',
      NUMBER,
      (x) => x.rps,
      {
        displayName: 'RPS',
        unit: 'reqps',
        decimals: 2,
        description: figureDescription('rate', rows),
        custom: { width: 100 },
      },
    ],
    [
      'errors',
      NUMBER,
      (x) => x.errors,
      { displayName: 'Errors', decimals: 0, description: figureDescription('errors', rows), custom: { width: 70 } },
    ],
    [
      'errorRate',
      NUMBER,
      (x) => x.errorRate,
      {
        displayName: 'Error rate',
        unit: 'percentunit',
        decimals: 1,
        description: 'Errors / requests',
        custom: { width: 90 },
      },
    ],
  ]);
}

/** Figure origins as a reader says them. */
export const ORIGIN_LABELS: Record<FigureOrigin, string> = {
  'service-metrics': 'service metrics',
  spanmetrics: 'span metrics',
  'ingest-counters': 'ingest counters',
  'sampled-traces': 'sampled traces',
};

const FIGURE_WORDS: Record<keyof FigureSources, string> = { rate: 'requests', errors: 'errors', latency: 'latency' };
const FIGURE_KEYS = Object.keys(FIGURE_WORDS) as Array<keyof FigureSources>;

/** Where a row's figures come from: its origins (`service metrics`, `service metrics + sampled traces`). */
export function originsCell(figures: FigureSources | undefined): string {
  return figures
    ? [...new Set(FIGURE_KEYS.map((k) => ORIGIN_LABELS[figures[k].origin]))].join(' + ')
    : 'kernel probes only';
}

/** Which of a row's figures are estimates rather than counts: `none`, `all`, or their names (`latency`). */
export function estimatesCell(figures: FigureSources | undefined): string | null {
  if (!figures) {
    return null;
  }
  const estimated = FIGURE_KEYS.filter((k) => !figures[k].exact).map((k) => FIGURE_WORDS[k]);
  return estimated.length === 0 ? 'none' : estimated.length === FIGURE_KEYS.length ? 'all' : estimated.join(', ');
}

/** The two provenance columns: the origins, and the estimates in a warning colour (anything but `none`). */
function provenanceFields(rows: Array<{ figures?: FigureSources }>) {
  return columns(rows, [
    [
      'source',
      STRING,
      (x) => originsCell(x.figures),
      {
        displayName: 'Source',
        description:
          'Where the figures come from (the proxy prefers counts: service metrics, span metrics, ingest counters, then sampled traces)',
        custom: { width: 130 },
      },
    ],
    [
      'estimated',
      STRING,
      (x) => estimatesCell(x.figures),
      {
        displayName: 'Estimated',
        description:
          'The figures that are estimates, not counts (a sample of traces, interpolated percentiles): the column descriptions and the notices say why',
        custom: { width: 150, cellOptions: { type: 'color-text' } },
        mappings: [
          { type: 'value' as never, options: { none: { color: 'text', index: 0 } } },
          { type: 'regex' as never, options: { pattern: '.+', result: { color: 'orange', index: 1 } } },
        ],
      },
    ],
  ]);
}

/** A column's description (its header's tooltip in Grafana): where the figure of its rows comes from, estimates first. */
export function figureDescription(key: keyof FigureSources, rows: Array<{ figures?: FigureSources }>): string {
  const seen = new Set<string>();
  for (const r of [...rows].sort(
    (a, b) => Number(a.figures?.[key].exact ?? true) - Number(b.figures?.[key].exact ?? true)
  )) {
    const f = r.figures?.[key];
    if (f) {
      seen.add(`${f.exact ? 'Counted' : 'Estimated'} from ${ORIGIN_LABELS[f.origin]}${f.note ? `: ${f.note}` : ''}`);
    }
  }
  return [...seen].join('. ');
}

/** @param kernel per service, the summed kernel-event counts of its pods (undefined: not asked). */
export function servicesFrame(answer: ServicesAnswer, kernel?: Record<string, Record<string, number>>): DataFrame {
  const s = answer.services;
  return frame(
    [
      ...columns(s, [
        [
          'service',
          STRING,
          (x) => x.service,
          { displayName: 'Service', links: [appPathLink('Open service', 'servicePath')] },
        ],
        ['servicePath', STRING, (x) => appPaths.service(x.service), HIDDEN],
      ]),
      ...figureFields(s),
      // Each latency on its own scale (a bar of P99 is not drawn against the request counts).
      ...columns(s, [
        [
          'p50',
          NUMBER,
          (x) => x.p50Ms,
          {
            displayName: 'P50',
            unit: 'ms',
            fieldMinMax: true,
            description: figureDescription('latency', s),
            custom: { width: 90 },
          },
        ],
        [
          'p99',
          NUMBER,
          (x) => x.p99Ms,
          {
            displayName: 'P99',
            unit: 'ms',
            fieldMinMax: true,
            description: figureDescription('latency', s),
            links: [appPathLink('Open service', 'servicePath')],
            custom: { width: 90 },
          },
        ],
        ['pods', NUMBER, (x) => x.pods.length, { displayName: 'Pods', decimals: 0, custom: { width: 60 } }],
      ]),
      ...provenanceFields(s),
      ...(kernel
        ? [
            field(
              'kernel',
              STRING,
              s.map((x) => (kernel[x.service] ? kernelCell(kernel[x.service]) : 'unavailable')),
              { displayName: 'Kernel signals' }
            ),
          ]
        : []),
    ],
    { name: 'services' }
  );
}

export function podsFrame(answer: PodsAnswer): DataFrame {
  const p = answer.pods;
  return frame(
    [
      ...columns(p, [
        [
          'pod',
          STRING,
          (x) => x.pod,
          { displayName: 'Pod', links: [appPathLink('Kernel evidence of this pod', 'podPath')] },
        ],
        ['podPath', STRING, (x) => appPaths.pod(answer.service, x.pod), HIDDEN],
        ['node', STRING, (x) => x.node ?? '', { displayName: 'Node' }],
      ]),
      ...figureFields(p),
      ...columns(p, [
        [
          'p50',
          NUMBER,
          (x) => x.p50Ms,
          { displayName: 'P50', unit: 'ms', description: figureDescription('latency', p), custom: { width: 90 } },
        ],
        [
          'p99',
          NUMBER,
          (x) => x.p99Ms,
          { displayName: 'P99', unit: 'ms', description: figureDescription('latency', p), custom: { width: 90 } },
        ],
      ]),
      ...provenanceFields(p),
      ...columns(p, [
        ['kernel', STRING, (x) => kernelCell(x.kernelEvents), { displayName: 'Kernel signals' }],
        [
          'kernelEvents',
          NUMBER,
          (x) => total(x.kernelEvents),
          { displayName: 'Kernel events', decimals: 0, custom: { width: 110 } },
        ],
      ]),
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

const FIGURE_NAMES: Record<keyof FigureSources, string> = {
  rate: 'Requests and RPS',
  errors: 'Errors',
  latency: 'P50 and P99',
};

/**
 * What the reader must know about these figures: the answer's caveats, and each figure that is an estimate rather
 * than a count (from sampled traces, an interpolated percentile…), with the proxy's reason.
 */
export function figureNotices(
  answer: { notes: string[] },
  rows: Array<{ figures?: FigureSources }>
): QueryResultMetaNotice[] {
  const seen = new Set<string>();
  const out: QueryResultMetaNotice[] = answer.notes.map((text) => ({ severity: 'info', text }));
  for (const r of rows) {
    for (const key of Object.keys(FIGURE_NAMES) as Array<keyof FigureSources>) {
      const f = r.figures?.[key];
      const text =
        f && !f.exact
          ? `${FIGURE_NAMES[key]} are estimated from ${ORIGIN_LABELS[f.origin]}${f.note ? `: ${f.note}` : ''}.`
          : undefined;
      if (text && !seen.has(text)) {
        seen.add(text);
        out.push({ severity: 'info', text });
      }
    }
  }
  return out;
}
