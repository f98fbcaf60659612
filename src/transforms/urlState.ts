/**
 * URL state of the app views: which query keys follow the user from page to page (time range, refresh, variables),
 * the links of the drill-down, and the per-view state (trace search, compare selectors) as query strings.
 * Every view is a link someone can paste in an incident channel and open as it was.
 */

/** Keys that every drill-down link carries along: the time range, refresh and the scene variables. */
export const APP_URL_KEYS = ['from', 'to', 'timezone', 'refresh', 'var-backend', 'var-model', 'var-service'] as const;

export const APP_BASE = '/a/hopscope-rca-app';

/** Keeps only the preserved keys of a query string (`?from=…&foo=…` → `from=…`), in a stable order. */
export function preservedQuery(search: string, keys: readonly string[] = APP_URL_KEYS): URLSearchParams {
  const current = new URLSearchParams(search);
  const out = new URLSearchParams();
  for (const key of keys) {
    for (const value of current.getAll(key)) {
      out.append(key, value);
    }
  }
  return out;
}

function withQuery(path: string, params: URLSearchParams): string {
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

const seg = (s: string): string => encodeURIComponent(s);

/** The links of the drill-down, each keeping the current time range and variables. */
export const links = {
  overview: (search = ''): string => withQuery(`${APP_BASE}/overview`, preservedQuery(search)),
  services: (search = ''): string => withQuery(`${APP_BASE}/services`, preservedQuery(search)),
  service: (service: string, search = ''): string => withQuery(`${APP_BASE}/services/${seg(service)}`, preservedQuery(search)),
  pod: (service: string, pod: string, search = ''): string =>
    withQuery(`${APP_BASE}/services/${seg(service)}/pods/${seg(pod)}`, preservedQuery(search)),
  traces: (search = '', extra: Record<string, string | undefined> = {}): string => {
    const q = preservedQuery(search);
    for (const [k, v] of Object.entries(extra)) {
      if (v !== undefined && v !== '') {
        q.set(k, v);
      }
    }
    return withQuery(`${APP_BASE}/traces`, q);
  },
  trace: (traceId: string, search = ''): string => withQuery(`${APP_BASE}/traces/${seg(traceId)}`, preservedQuery(search)),
  compare: (search = ''): string => withQuery(`${APP_BASE}/compare`, preservedQuery(search)),
  alerts: (search = ''): string => withQuery(`${APP_BASE}/alerts`, preservedQuery(search)),
  /** A time window around an instant (used by alerts and heatmap rows): ±`padMs`, as absolute epoch ms. */
  at: (path: string, centerMs: number, padMs = 5 * 60_000, search = ''): string => {
    const q = preservedQuery(search);
    q.set('from', String(Math.round(centerMs - padMs)));
    q.set('to', String(Math.round(centerMs + padMs)));
    return withQuery(path, q);
  },
};

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
    minDurationMs: state.minDurationMs !== undefined && Number.isFinite(state.minDurationMs) ? String(state.minDurationMs) : undefined,
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
