/**
 * `traces`: traces of the window (GET /traces), slowest first; `top` keeps the slowest N of the `limit` scanned
 * (a service's slowest traces), filters as the proxy reads them.
 */
import { api } from '../../api/client';
import { slowestTraces, traceListFrame } from '../frames/traces';
import { answerFrames, defineKind } from '../kind';

export interface TracesQuery {
  service?: string;
  minDurationMs?: number;
  status?: 'ok' | 'error' | 'timeout';
  /** How many traces the proxy returns (the slowest of the whole range: sort=duration). */
  limit?: number;
  /** Keep only the N slowest of those. */
  top?: number;
}

export const traces = defineKind<TracesQuery>({
  run: (q, ctx) =>
    answerFrames(
      ctx,
      api.traces({
        from: ctx.from,
        to: ctx.to,
        service: q.service,
        minDurationMs: q.minDurationMs,
        status: q.status,
        limit: q.limit ?? 100,
        sort: 'duration',
      }),
      (a) => [traceListFrame(q.top ? slowestTraces(a.traces, q.top) : slowestTraces(a.traces, a.traces.length))]
    ),
});
