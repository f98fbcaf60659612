/**
 * Which traces of the embedded store belong to which load-test run: the `hopscope.run_id` the chain copies from W3C
 * baggage onto its spans (span attribute, or a resource attribute for services that set it there). Follows the store
 * as an observer, so it holds exactly the store's traces: a trace the store evicts leaves its run here too. A trace
 * belongs to the first run id seen on it (one request carries one baggage).
 */
import type { Span } from '../../../contract';
import type { TraceStoreObserver } from './trace-store';

export const RUN_ID_ATTRIBUTE = 'hopscope.run_id';

function runIdOf(s: Span): string | undefined {
  const v = s.attributes[RUN_ID_ATTRIBUTE] ?? s.resource[RUN_ID_ATTRIBUTE];
  return typeof v === 'string' && v ? v : undefined;
}

export class RunIndex implements TraceStoreObserver {
  private byRun = new Map<string, Set<string>>();
  private runOf = new Map<string, string>();

  added(spans: readonly Span[]): void {
    for (const s of spans) {
      if (this.runOf.has(s.traceId)) continue;
      const run = runIdOf(s);
      if (!run) continue;
      this.runOf.set(s.traceId, run);
      let set = this.byRun.get(run);
      if (!set) this.byRun.set(run, (set = new Set()));
      set.add(s.traceId);
    }
  }

  dropped(traceId: string): void {
    const run = this.runOf.get(traceId);
    if (run === undefined) return;
    this.runOf.delete(traceId);
    const set = this.byRun.get(run);
    set?.delete(traceId);
    if (set && set.size === 0) this.byRun.delete(run);
  }

  /** The trace ids of a run held by the store, in arrival order. */
  traceIds(runId: string): string[] {
    return [...(this.byRun.get(runId) ?? [])];
  }

  get size(): { runs: number; traces: number } {
    return { runs: this.byRun.size, traces: this.runOf.size };
  }
}
