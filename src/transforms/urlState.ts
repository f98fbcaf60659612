/**
 * The Traces view's own URL state (search filters) parsed and written safely. The app's paths, the keys every link
 * carries and the drill-down links themselves live in contract/app-urls.ts, shared with the proxy.
 */

/** Trace search state (the Traces page): what the search box and filters hold. */
export interface TraceSearchState {
  service?: string;
  minDurationMs?: number;
  status?: 'ok' | 'error' | 'timeout';
  traceId?: string;
}

const TRACE_STATUSES = new Set(['ok', 'error', 'timeout']);

export function traceSearchToUrl(state: TraceSearchState): Record<string, string | undefined> {
  return {
    service: state.service || undefined,
    minDurationMs:
      state.minDurationMs !== undefined && Number.isFinite(state.minDurationMs)
        ? String(state.minDurationMs)
        : undefined,
    status: state.status,
    traceId: state.traceId || undefined,
  };
}

export function traceSearchFromUrl(values: Record<string, string | string[] | null | undefined>): TraceSearchState {
  const one = (k: string): string | undefined => {
    const v = values[k];
    const s = Array.isArray(v) ? v[0] : v;
    return s === null || s === undefined || s === '' ? undefined : s;
  };
  const out: TraceSearchState = {};
  const service = one('service');
  if (service) {
    out.service = service;
  }
  const min = Number(one('minDurationMs'));
  if (one('minDurationMs') !== undefined && Number.isFinite(min) && min >= 0) {
    out.minDurationMs = min;
  }
  const status = one('status');
  if (status && TRACE_STATUSES.has(status)) {
    out.status = status as TraceSearchState['status'];
  }
  const traceId = one('traceId');
  if (traceId && isTraceId(traceId)) {
    out.traceId = traceId.toLowerCase();
  }
  return out;
}

/** A W3C trace id: 32 hex digits, not all zero. */
export function isTraceId(s: string): boolean {
  return /^[0-9a-fA-F]{32}$/.test(s) && !/^0+$/.test(s);
}
