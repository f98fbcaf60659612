/** Trace lists for the drill-down: the proxy lists newest first; an incident needs the slowest first. */
import type { TraceList, TraceSummary } from '../../contract';

/** The `n` slowest traces, errors and timeouts first among equals (they are what an SRE opens first). */
export function slowestTraces(traces: TraceSummary[], n: number): TraceSummary[] {
  const bad = (t: TraceSummary): number => (t.status === 'error' || t.status === 'timeout' ? 1 : 0);
  return [...traces].sort((a, b) => b.durationMs - a.durationMs || bad(b) - bad(a)).slice(0, n);
}

export function slowestList(list: TraceList, n: number): TraceList {
  return { ...list, traces: slowestTraces(list.traces, n) };
}
