/**
 * The Overview's first four requests (golden metrics, GPU heatmap, annotations, services) from a query context, and
 * the same requests worked out from the URL alone, so module.js can start them before the page's code has loaded
 * (prefetch.ts). Plain functions, no Grafana import: module.js imports them, and unit tests run them in Node.
 */
import { ENDPOINTS } from '../../api/endpoints';
import { cleanParams } from '../../api/params';
import type { EarlyRequest } from '../../api/prefetch';
import { goldenParams, goldenStepMs, type GoldenFilters } from '../../api/requests';
import { APP_BASE, appPaths } from '../../../contract/app-urls';
import { BACKENDS } from '../../constants';

export interface OverviewQueryContext extends GoldenFilters {
  from: number;
  to: number;
}

/** The parameters of the Overview's requests for a context (its query kinds and the early requests use these). */
export function overviewQueries(ctx: OverviewQueryContext) {
  return { golden: goldenParams(ctx.from, ctx.to, ctx), window: { from: ctx.from, to: ctx.to } };
}

/** The Overview's path (or the bare app path, which opens the Overview), with or without a trailing slash. */
export function isOverviewPath(pathname: string): boolean {
  const p = pathname.replace(/\/+$/, '');
  return p === APP_BASE || p === appPaths.overview() || p.startsWith(`${appPaths.overview()}/`);
}

/** Resolves a relative time (`now-1h`) to epoch ms as the page's time range does (Grafana's dateMath); undefined if it cannot. */
export type RelativeTimeParser = (value: string, roundUp: boolean) => number | undefined;

/** A URL time (`from`/`to`) as epoch ms, the way the page's time range reads it; undefined when unsure. */
function urlTime(
  value: string,
  roundUp: boolean,
  parseRelative: RelativeTimeParser
): { ms: number; relative: boolean } | undefined {
  if (value.includes('now')) {
    // Rounding (`now/d`) depends on the user's time zone and fiscal year: left to the page.
    if (value.includes('/')) {
      return undefined;
    }
    const ms = parseRelative(value, roundUp);
    return ms !== undefined && Number.isFinite(ms) ? { ms, relative: true } : undefined;
  }
  // Epoch milliseconds (8- and 15-digit values are dates: YYYYMMDD, YYYYMMDDTHHmmss).
  return /^\d+$/.test(value) && value.length !== 8 && value.length !== 15
    ? { ms: Number(value), relative: false }
    : undefined;
}

/** A variable's value from the URL as the page's filter (undefined for All or empty); null when the URL is unusual. */
function urlVariable(q: URLSearchParams, name: string, allowed?: readonly string[]): string | undefined | null {
  const values = q.getAll(`var-${name}`);
  if (values.length > 1) {
    return null;
  }
  const v = values[0] ?? '';
  if (v === '' || v === '$__all' || v === 'All') {
    return undefined;
  }
  return allowed && !allowed.includes(v) ? null : v;
}

/**
 * The Overview's four requests for a location, as the page will make them: same endpoints, same parameters (the
 * page's defaults when the URL has none). A relative range (`now-1h`) resolves again when the page asks, a moment
 * later, so its `from`/`to` may differ by up to one golden step (less than one point of the charts). Undefined when
 * the location is not the Overview or its URL is anything unusual: then the page simply asks itself.
 */
export function overviewEarlyRequests(
  location: { pathname: string; search: string },
  parseRelative: RelativeTimeParser
): EarlyRequest[] | undefined {
  if (location.pathname.replace(/\/+$/, '') !== appPaths.overview()) {
    return undefined;
  }
  const q = new URLSearchParams(location.search);
  if (q.getAll('from').length > 1 || q.getAll('to').length > 1) {
    return undefined;
  }
  const from = urlTime(q.get('from') ?? 'now-1h', false, parseRelative);
  const to = urlTime(q.get('to') ?? 'now', true, parseRelative);
  const backend = urlVariable(q, 'backend', BACKENDS);
  const model = urlVariable(q, 'model');
  const service = urlVariable(q, 'service');
  if (!from || !to || from.ms >= to.ms || backend === null || model === null || service === null) {
    return undefined;
  }
  const queries = overviewQueries({ from: from.ms, to: to.ms, backend, model, service });
  const step = goldenStepMs(from.ms, to.ms);
  const tolerance = { ...(from.relative ? { from: step } : {}), ...(to.relative ? { to: step } : {}) };
  return [
    { path: ENDPOINTS.golden, params: cleanParams(queries.golden)!, tolerance },
    { path: ENDPOINTS.heatmap, params: cleanParams(queries.window)!, tolerance },
    { path: ENDPOINTS.annotations, params: cleanParams(queries.window)!, tolerance },
    { path: ENDPOINTS.services, params: cleanParams(queries.window)!, tolerance },
  ];
}
