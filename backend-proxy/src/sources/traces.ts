/** The trace source interface (Tempo or the embedded store) and the embedded store's adapter. */
import type { Span, TraceDetail, TraceSummary } from '../../../contract';
import type { Baseline } from '../rca/baseline';
import type { TraceQuery, TraceStore } from '../store/trace-store';

export interface TraceSource {
  readonly name: string;
  search(q: TraceQuery): Promise<TraceSummary[]>;
  get(traceId: string): Promise<TraceDetail | undefined>;
  /** Recent healthy traffic containing these service+operation pairs (the RCA baseline), as spans grouped by trace id. */
  baseline(keys: Array<{ service: string; name: string }>, exceptTraceId?: string, beforeMs?: number): Promise<Span[]>;
  /**
   * Optional: the per-trace RCA baseline statistics of the same traces `baseline` would return (`baselineStats` of
   * them), when the source can answer without handing over the spans (the embedded store keeps them precomputed).
   */
  baselineStats?(
    keys: Array<{ service: string; name: string }>,
    exceptTraceId?: string,
    beforeMs?: number
  ): Promise<Baseline | undefined>;
  /** Spans in a window (services, compare, window RCA); bounded. */
  spansInWindow(from: number, to: number): Promise<Span[]>;
  health(): Promise<void>;
}

export class EmbeddedTraceSource implements TraceSource {
  readonly name = 'embedded-store';
  constructor(public store: TraceStore) {}
  async search(q: TraceQuery): Promise<TraceSummary[]> {
    return this.store.search(q);
  }
  async get(traceId: string): Promise<TraceDetail | undefined> {
    return this.store.get(traceId);
  }
  async baseline(
    keys: Array<{ service: string; name: string }>,
    exceptTraceId?: string,
    beforeMs?: number
  ): Promise<Span[]> {
    return this.store.baseline(keys, 200, exceptTraceId, beforeMs);
  }
  async baselineStats(
    keys: Array<{ service: string; name: string }>,
    exceptTraceId?: string,
    beforeMs?: number
  ): Promise<Baseline | undefined> {
    return this.store.baselineStats(keys, 200, exceptTraceId, beforeMs);
  }
  async spansInWindow(from: number, to: number): Promise<Span[]> {
    return this.store.spansInWindow(from, to);
  }
  async health(): Promise<void> {
    /* in-process: always there */
  }
}
