/**
 * A/B compare → frames: the two latency distributions on the proxy's shared bins (a histogram frame, one count field
 * per side), the summary statistics side by side with B's change against A and where each side's figures come from
 * (counted, or estimated from sampled traces), P50/P99 over time, and the jitter hot zones (time buckets where P99/P50
 * jumps) as a state per side and bucket for a state timeline.
 */
import type { DataFrame, QueryResultMetaNotice } from '@grafana/data';

import type { CompareAnswer, CompareSide } from '../../../contract';
import { partRefId } from '../query';
import { columns, field, frame, NUMBER, STRING, TIME } from './frame';
import { ORIGIN_LABELS } from './services';

export function sideLabel(side: CompareSide, fallback: string): string {
  const s = side.selector;
  const parts = [s.backend, s.model, s.service].filter(Boolean);
  return parts.length ? parts.join(' · ') : fallback;
}

/** Parses the proxy's selector syntax for the inputs: `backend=vllm,model=llama` ⇄ fields. */
export function parseSelector(s: string): { backend?: string; model?: string; service?: string } {
  const out: Record<string, string> = {};
  for (const part of s.split(',')) {
    const [k, ...rest] = part.split('=');
    const v = rest.join('=').trim();
    if (k && v && ['backend', 'model', 'service'].includes(k.trim())) {
      out[k.trim()] = v;
    }
  }
  return out;
}

export function formatSelector(s: { backend?: string; model?: string; service?: string }): string {
  return (['backend', 'model', 'service'] as const)
    .filter((k) => s[k])
    .map((k) => `${k}=${s[k]}`)
    .join(',');
}

export const HOT = 'hot zone';
export const STEADY = 'steady';

export function compareFrames(d: CompareAnswer, refId: string): DataFrame[] {
  const la = `A: ${sideLabel(d.a, 'A')}`;
  const lb = `B: ${sideLabel(d.b, 'B')}`;
  const bins = Math.max(0, d.bucketEdgesMs.length - 1);
  const counts = (s: CompareSide) => Array.from({ length: bins }, (_, i) => s.histogram[i] ?? 0);
  const histogram = frame(
    [
      field('xMin', NUMBER, d.bucketEdgesMs.slice(0, bins), { unit: 'ms', displayName: 'From' }),
      field('xMax', NUMBER, d.bucketEdgesMs.slice(1, bins + 1), { unit: 'ms', displayName: 'To' }),
      field(la, NUMBER, counts(d.a), { displayName: la, decimals: 0 }),
      field(lb, NUMBER, counts(d.b), { displayName: lb, decimals: 0 }),
    ],
    { name: 'latency distribution', refId: partRefId(refId, 'histogram') }
  );
  const figures = sidesProvenance(d);
  const exact = d.a.exact && d.b.exact;
  const rows: Array<[string, number | null, number | null, string]> = [
    ['Server spans (kept)', d.a.count, d.b.count, "the inference servers' own spans the trace source kept"],
    [exact ? 'Requests' : 'Requests (estimated)', d.a.estimatedRequests, d.b.estimatedRequests, figures],
    ['P50 latency', d.a.p50Ms, d.b.p50Ms, figures],
    ['P99 latency', d.a.p99Ms, d.b.p99Ms, figures],
    ['TTFT P50', d.a.ttftP50Ms, d.b.ttftP50Ms, figures],
    ['TTFT P99', d.a.ttftP99Ms, d.b.ttftP99Ms, figures],
  ];
  const change = (a: number | null, b: number | null) => (a !== null && b !== null && a > 0 ? (b - a) / a : null);
  // A side whose figures are estimates says so in its column's name, and why in its description.
  const statColumn = (side: CompareSide, label: string) => ({
    displayName: side.exact ? label : `${label} (estimated)`,
    decimals: 1,
    description: `${sideProvenance(side)}${side.note ? `: ${side.note}` : ''}`,
    custom: { width: 150 },
  });
  const stats = frame(
    columns(rows, [
      ['stat', STRING, (r) => r[0], { displayName: 'Statistic', custom: { width: 200 } }],
      ['a', NUMBER, (r) => r[1], statColumn(d.a, la)],
      ['b', NUMBER, (r) => r[2], statColumn(d.b, lb)],
      [
        'change',
        NUMBER,
        (r) => change(r[1], r[2]),
        { displayName: 'B vs A', unit: 'percentunit', decimals: 1, custom: { width: 100 } },
      ],
      ['source', STRING, (r) => r[3], { displayName: 'Source' }],
    ]),
    { name: 'statistics', refId: partRefId(refId, 'stats') }
  );
  const series = frame(
    [
      field('time', TIME, d.times),
      field(`${la} P99`, NUMBER, d.a.p99Series, { unit: 'ms', displayNameFromDS: `${la} P99` }),
      field(`${lb} P99`, NUMBER, d.b.p99Series, { unit: 'ms', displayNameFromDS: `${lb} P99` }),
      field(`${la} P50`, NUMBER, d.a.p50Series, {
        unit: 'ms',
        displayNameFromDS: `${la} P50`,
        custom: { lineStyle: { fill: 'dash', dash: [6, 4] } },
      }),
      field(`${lb} P50`, NUMBER, d.b.p50Series, {
        unit: 'ms',
        displayNameFromDS: `${lb} P50`,
        custom: { lineStyle: { fill: 'dash', dash: [6, 4] } },
      }),
    ],
    { name: 'latency over time', refId: partRefId(refId, 'latency') }
  );
  const zoneAt = (s: CompareSide, t: number) => s.hotZones.find((z) => t >= z.startMs && t < z.endMs);
  const state = (s: CompareSide) =>
    d.times.map((t, i) => (s.p99Series[i] === null ? null : zoneAt(s, t) ? HOT : STEADY));
  const hot = frame(
    [
      field('time', TIME, d.times),
      field(la, STRING, state(d.a), { displayName: la }),
      field(lb, STRING, state(d.b), { displayName: lb }),
    ],
    { name: 'jitter hot zones', refId: partRefId(refId, 'hotZones') }
  );
  return [histogram, stats, series, hot];
}

/** How one side's figures were obtained: `counted` (every server span was kept), or `estimated from sampled traces`. */
export function sideProvenance(side: CompareSide): string {
  return side.exact ? 'counted' : `estimated from ${ORIGIN_LABELS[side.origin]}`;
}

/** Both sides' provenance in one cell: once when they agree, else `A: … · B: …`. */
export function sidesProvenance(d: CompareAnswer): string {
  const a = sideProvenance(d.a);
  const b = sideProvenance(d.b);
  return a === b ? `both ${a}` : `A ${a} · B ${b}`;
}

/** A side counted from a sample of traces says so (the proxy's note), so a reader weighs the comparison. */
export function compareNotices(d: CompareAnswer): QueryResultMetaNotice[] {
  return (['a', 'b'] as const).flatMap((k) => {
    const side = d[k];
    return side.exact
      ? []
      : [
          {
            severity: 'info' as const,
            text: `${k.toUpperCase()}: ${sideProvenance(side)}${side.note ? ` — ${side.note}` : ''}`,
          },
        ];
  });
}
