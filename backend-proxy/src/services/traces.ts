/** Traces from the trace source (Tempo or the embedded store): a search that degrades, and one trace by id. */
import type { SourceStatus, TraceDetail, TraceSummary } from '../../../contract';
import { invalid, notFound, upstream } from '../domain/errors';
import { SourceError } from '../sources/http';
import type { TraceSource } from '../sources/traces';
import type { TraceQuery } from '../store/trace-store';

const TRACE_ID_RE = /^[0-9a-fA-F]{1,32}$/;

export class TraceService {
  constructor(readonly source: TraceSource) {}

  /** A failing source degrades, it does not fail: an empty list plus the reason, so the panel says why. */
  async search(q: TraceQuery): Promise<{ traces: TraceSummary[]; sources: SourceStatus[] }> {
    const t0 = performance.now();
    try {
      const traces = await this.source.search(q);
      return {
        traces,
        sources: [{ source: this.source.name, ok: true, latencyMs: Math.round(performance.now() - t0) }],
      };
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      return {
        traces: [],
        sources: [
          { source: this.source.name, ok: false, latencyMs: Math.round(performance.now() - t0), error: err.message },
        ],
      };
    }
  }

  /** One trace by id: 400 for a malformed id, 502 when the trace source fails, 404 when it has no such trace. */
  async byId(id: string): Promise<TraceDetail> {
    if (!TRACE_ID_RE.test(id)) throw invalid(`traceId: "${id.slice(0, 40)}" is not a hex trace id (1-32 hex digits)`);
    let detail: TraceDetail | undefined;
    try {
      detail = await this.source.get(id);
    } catch (err) {
      if (err instanceof SourceError) throw upstream(err.message);
      throw err;
    }
    if (!detail) throw notFound(`trace ${id.toLowerCase().padStart(32, '0')} not found in ${this.source.name}`);
    return detail;
  }
}
