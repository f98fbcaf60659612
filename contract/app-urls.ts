/**
 * The app's URL scheme, once: page paths under `/a/hopscope-rca-app/` and the query keys each view reads. Plain
 * functions with no React or Grafana import, so the app (drill-down links, SceneAppPage urls) and the proxy (alert
 * links, the postmortem's Markdown links) build every link the same way, and a link pasted anywhere opens that view.
 */

/** The plugin id (plugin.json `id`; tests/static/foundation/plugin-json.test.ts checks they agree). */
export const APP_PLUGIN_ID = 'hopscope-rca-app';

/** Where Grafana mounts the app: every page lives under this path. */
export const APP_BASE = `/a/${APP_PLUGIN_ID}`;

/** Top-level pages (route segments under APP_BASE), as named in the design handout. */
export const APP_PAGES = ['overview', 'services', 'traces', 'compare', 'alerts', 'runs'] as const;
export type AppPage = (typeof APP_PAGES)[number];

/** Keys every drill-down link carries along: the time range, refresh and the scene variables. */
export const APP_URL_KEYS = [
  'from',
  'to',
  'timezone',
  'refresh',
  'var-backend',
  'var-model',
  'var-service',
  'var-prometheus',
] as const;

/** Query keys a single view owns (its own URL state, on top of APP_URL_KEYS). */
export const VIEW_URL_KEYS = {
  /** Traces: the search filters. */
  traces: ['service', 'minDurationMs', 'status'],
  /** One trace: the selected span, and a saved root-cause answer shown instead of the live one. */
  trace: ['span', 'answer'],
  /** Compare: the two selectors, e.g. `a=backend=vllm&b=backend=tgi`. */
  compare: ['a', 'b'],
  /** Alerts: the rule an alert link points at. */
  alerts: ['rule'],
  /** Runs: the list's filters (scene variables). */
  runs: ['var-scenario', 'var-status'],
  /** One run: the run it is compared with. */
  run: ['compareWith'],
} as const;

const seg = (s: string): string => encodeURIComponent(s);

/** Page paths (no query string). */
export const appPaths = {
  overview: (): string => `${APP_BASE}/overview`,
  services: (): string => `${APP_BASE}/services`,
  service: (service: string): string => `${APP_BASE}/services/${seg(service)}`,
  pod: (service: string, pod: string): string => `${APP_BASE}/services/${seg(service)}/pods/${seg(pod)}`,
  traces: (): string => `${APP_BASE}/traces`,
  trace: (traceId: string): string => `${APP_BASE}/traces/${seg(traceId)}`,
  compare: (): string => `${APP_BASE}/compare`,
  alerts: (): string => `${APP_BASE}/alerts`,
  /** Load-test runs. */
  runs: (): string => `${APP_BASE}/runs`,
  run: (runId: string): string => `${APP_BASE}/runs/${seg(runId)}`,
  /** "Explain this window": the window root cause of the range in `from`/`to` against the hour before. */
  explain: (): string => `${APP_BASE}/explain`,
};

/** Query values: undefined and empty strings are left out; numbers (epoch ms) are written as integers. */
export type AppQuery = Record<string, string | number | undefined>;

/** `path?query`, or just `path` when the query is empty. */
export function withQuery(path: string, query: URLSearchParams | AppQuery = {}): string {
  const q = query instanceof URLSearchParams ? query : toParams(query);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

function toParams(query: AppQuery): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== '') {
      out.set(k, typeof v === 'number' ? String(Math.round(v)) : v);
    }
  }
  return out;
}

/** Keeps only the carried keys of a query string (`?from=…&foo=…` → `from=…`), in a stable order. */
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

/** The carried keys of `search`, with `extra` set on top (undefined / empty values left out). */
function carried(search: string, extra: AppQuery = {}): URLSearchParams {
  const q = preservedQuery(search);
  toParams(extra).forEach((v, k) => q.set(k, v));
  return q;
}

/**
 * Drill-down links from the current query string (`location.search`): each keeps the time range and variables.
 * `extra` adds a view's own keys (VIEW_URL_KEYS), e.g. `appLinks.traces(search, { service: 'rag' })`.
 */
export const appLinks = {
  overview: (search = ''): string => withQuery(appPaths.overview(), carried(search)),
  services: (search = ''): string => withQuery(appPaths.services(), carried(search)),
  service: (service: string, search = ''): string => withQuery(appPaths.service(service), carried(search)),
  pod: (service: string, pod: string, search = ''): string => withQuery(appPaths.pod(service, pod), carried(search)),
  traces: (search = '', extra: AppQuery = {}): string => withQuery(appPaths.traces(), carried(search, extra)),
  trace: (traceId: string, search = '', extra: AppQuery = {}): string =>
    withQuery(appPaths.trace(traceId), carried(search, extra)),
  compare: (search = '', extra: AppQuery = {}): string => withQuery(appPaths.compare(), carried(search, extra)),
  alerts: (search = '', extra: AppQuery = {}): string => withQuery(appPaths.alerts(), carried(search, extra)),
  runs: (search = '', extra: AppQuery = {}): string => withQuery(appPaths.runs(), carried(search, extra)),
  /** A run's page; give `from`/`to` in `extra` to pin it to the run's window. */
  run: (runId: string, search = '', extra: AppQuery = {}): string =>
    withQuery(appPaths.run(runId), carried(search, extra)),
  /** The window root cause of an absolute window (epoch ms), e.g. a range brushed on the Overview. */
  explain: (window: { from: number; to: number }, search = ''): string =>
    withQuery(appPaths.explain(), carried(search, window)),
  /** A path with an absolute window around an instant (alerts, heatmap rows): ±`padMs`, epoch ms. */
  at: (path: string, centerMs: number, padMs = 5 * 60_000, search = ''): string =>
    withQuery(path, carried(search, windowAround(centerMs, padMs))),
};

/** An absolute window of ±`padMs` around an instant, as the `from`/`to` keys (epoch ms). */
export function windowAround(centerMs: number, padMs = 5 * 60_000): { from: number; to: number } {
  return { from: Math.round(centerMs - padMs), to: Math.round(centerMs + padMs) };
}

/**
 * A full link for someone outside the app (the proxy's alerts and Markdown export): `base` is where the app is
 * opened (Grafana's root URL, or '' for a path relative to it), `path` one of `appPaths`, `query` its keys.
 * e.g. `appLink('https://grafana.example', appPaths.trace(id), { from, to })`.
 */
export function appLink(base: string, path: string, query: AppQuery = {}): string {
  return `${base.replace(/\/+$/, '')}${withQuery(path, query)}`;
}
