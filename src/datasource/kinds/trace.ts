/** `trace`: one trace's spans (GET /traces/:traceId) as Grafana's trace frame. The window is the trace's own. */
import { api } from '../../api/client';
import { traceFrame } from '../frames/traces';
import { answerFrames, defineKind, shared } from '../kind';

export interface TraceQuery {
  traceId: string;
}

/** Shared with the kinds that need the same trace in the same refresh (traceKernelEvents). */
export const fetchTrace = (traceId: string) => shared(`trace:${traceId}`, () => api.trace(traceId));

export const trace = defineKind<TraceQuery>({
  timeRange: false,
  run: (q, ctx) =>
    answerFrames(
      ctx,
      fetchTrace(q.traceId),
      (a) => [traceFrame(a)],
      (a) => (a.partial ? [{ severity: 'warning', text: 'Partial trace: some spans have not arrived (yet).' }] : [])
    ),
});
