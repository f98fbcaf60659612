/**
 * What every origin of the drill-down's figures answers: per row key (a service, or a pod of one service), the
 * figures it has, each with its provenance. Absent figures: this origin lacks them.
 */
import type { FigureProvenance } from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import type { PromSeries } from '../sources/prometheus';
import { round } from '../services/stats';

/** One origin's figures for one row (a service, or a pod of one service). Absent figures: this origin lacks them. */
export interface Figures {
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
export type OriginFigures = Map<string, Figures>;

/** How the counts of a window are scoped: by service (the services list) or by pod (one service's pods). */
export interface Scope {
  service?: string;
  range: TimeRange;
}

/** What a row is: a service (the services list) or a pod (one service's pods). */
export type KeyBy = 'service' | 'pod';

/** The row of `key`, made empty on first use. */
export const row = (m: OriginFigures, key: string): Figures => {
  let f = m.get(key);
  if (!f) m.set(key, (f = { pods: new Set() }));
  return f;
};

export const valueOf = (s: PromSeries): number | null => s.points[0]?.[1] ?? null;
export const toMs = (sec: number | null): number | null => (sec === null ? null : round(sec * 1000, 1));

/** The histogram reads ms; `toMs` takes seconds. */
export const nullableSec = (ms: number | null): number | null => (ms === null ? null : ms / 1000);

export const pct = (part: number, whole: number): string => `${whole ? Math.round((100 * part) / whole) : 0}%`;
