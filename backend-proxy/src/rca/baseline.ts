/**
 * The healthy baseline: per (service, span kind, operation), robust statistics of exclusive time, duration and — for
 * client spans — the client→server gap, plus the error rate. A plain JSON object, so it can be cached and shipped.
 */
import type { Span } from '../../../contract';
import { kvCacheHitRate } from './lambda';
import { type RobustStats, robustStats } from './stats';
import { buildTree } from './tree';

export interface OperationBaseline {
  service: string;
  kind: Span['kind'];
  operation: string;
  self: RobustStats;
  duration: RobustStats;
  gap?: RobustStats;
  /** LLM spans: KV/prefix-cache hit rate (0…1) of healthy calls, when the spans report it. */
  kvHit?: RobustStats;
  errorRate: number;
}

export interface Baseline {
  version: 1;
  traces: number;
  spans: number;
  ops: Record<string, OperationBaseline>;
  /**
   * Chronic anomaly per service in the healthy traffic itself (share of end-to-end time flagged as excess, error
   * origins per trace): what a window shows at this level is not news. Filled by `buildBaseline`.
   */
  background?: Record<string, { latencyShare: number; errorShare: number }>;
}

export const opKey = (s: Pick<Span, 'service' | 'kind' | 'name'>): string => `${s.service}\u001f${s.kind}\u001f${s.name}`;

export function groupByTrace(spans: Span[]): Span[][] {
  const m = new Map<string, Span[]>();
  for (const s of spans) {
    let g = m.get(s.traceId);
    if (!g) m.set(s.traceId, (g = []));
    g.push(s);
  }
  return [...m.values()];
}

/** Statistics only (see `buildBaseline` in ./background for the full baseline). */
export function baselineStats(spans: Span[] | Span[][]): Baseline {
  const traces = spans.length && Array.isArray(spans[0]) ? (spans as Span[][]) : groupByTrace(spans as Span[]);
  const acc = new Map<string, { s: Span; self: number[]; dur: number[]; gap: number[]; kv: number[]; errors: number }>();
  let count = 0;
  for (const tr of traces) {
    const t = buildTree(tr);
    for (let i = 0; i < tr.length; i++) {
      const s = tr[i];
      const k = opKey(s);
      let a = acc.get(k);
      if (!a) acc.set(k, (a = { s, self: [], dur: [], gap: [], kv: [], errors: 0 }));
      a.self.push(t.self[i]);
      a.dur.push(t.end[i] - t.start[i]);
      if (!Number.isNaN(t.gap[i])) a.gap.push(t.gap[i]);
      const kv = s.kind === 'client' ? undefined : kvCacheHitRate(s);
      if (kv !== undefined && Number.isFinite(kv)) a.kv.push(kv);
      if (s.status === 'error' || s.status === 'timeout') a.errors++;
      count++;
    }
  }
  const ops: Record<string, OperationBaseline> = {};
  for (const k of [...acc.keys()].sort()) {
    const a = acc.get(k)!;
    ops[k] = {
      service: a.s.service,
      kind: a.s.kind,
      operation: a.s.name,
      self: robustStats(a.self),
      duration: robustStats(a.dur),
      ...(a.gap.length ? { gap: robustStats(a.gap) } : {}),
      ...(a.kv.length ? { kvHit: robustStats(a.kv) } : {}),
      errorRate: a.errors / a.dur.length,
    };
  }
  return { version: 1, traces: traces.length, spans: count, ops };
}
