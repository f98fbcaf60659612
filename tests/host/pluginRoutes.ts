/**
 * Grafana's app-plugin data proxy, reduced to what plugin.json `routes` mean (pkg/api/pluginproxy in Grafana):
 * `/api/plugin-proxy/<id>/<proxyPath>` picks the first route whose method and `path` pattern match `proxyPath`
 * (`*` = the rest, `:name` = one segment); the target is the route `url` rendered with the plugin settings, joined
 * with what `*` matched (or nothing when the pattern has no `*`); the route `headers` are rendered and set.
 * Pure functions: the host's forwarding and its unit tests use them.
 */

export interface PluginRoute {
  path: string;
  method?: string;
  url?: string;
  headers?: Array<{ name: string; content: string }>;
  reqRole?: string;
}

export interface TemplateData {
  JsonData: Record<string, unknown>;
  SecureJsonData: Record<string, string>;
}

export interface RouteMatch {
  route: PluginRoute;
  /** What remains to append to the route url ('' when the pattern has no `*`). */
  rest: string;
}

function patternToRegExp(pattern: string): { re: RegExp; hasGlob: boolean } {
  const clean = pattern.replace(/^\/+/, '');
  let hasGlob = false;
  const body = clean
    .split('/')
    .map((segment) => {
      if (segment === '*') {
        hasGlob = true;
        return '(?<glob>.*)';
      }
      if (segment.startsWith(':')) {
        return '[^/]+';
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { re: new RegExp(`^${body}$`), hasGlob };
}

/** The first route of plugin.json that serves `method proxyPath`, or undefined (Grafana answers 404). */
export function matchRoute(routes: PluginRoute[], method: string, proxyPath: string): RouteMatch | undefined {
  const path = proxyPath.replace(/^\/+/, '');
  for (const route of routes) {
    const methods = (route.method ?? '').split(',').map((m) => m.trim().toUpperCase()).filter(Boolean);
    if (methods.length && !methods.includes('*') && !methods.includes(method.toUpperCase())) {
      continue;
    }
    const { re, hasGlob } = patternToRegExp(route.path);
    const m = re.exec(path);
    if (!m) {
      continue;
    }
    return { route, rest: hasGlob ? (m.groups?.glob ?? '') : '' };
  }
  return undefined;
}

/**
 * Renders the subset of Go templates Grafana's routes use: `{{ .JsonData.key }}` and `{{ .SecureJsonData.key }}`.
 * A missing value renders empty. Anything else is an error, so an unsupported template fails loudly, not silently.
 */
export function renderTemplate(template: string, data: TemplateData): string {
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_all, expr: string) => {
    const m = /^\.(JsonData|SecureJsonData)\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expr);
    if (!m) {
      throw new Error(`unsupported template action {{ ${expr} }}`);
    }
    const value = m[1] === 'JsonData' ? data.JsonData[m[2]] : data.SecureJsonData[m[2]];
    return value === undefined || value === null ? '' : String(value);
  });
}

/** Grafana's util.JoinURLFragments: one slash between the parts, a trailing slash kept. */
export function joinUrlFragments(a: string, b: string): string {
  if (!b) {
    return a;
  }
  return `${a.replace(/\/+$/, '')}/${b.replace(/^\/+/, '')}`;
}

/** The full target URL of a matched route (query string of the incoming request preserved, as Grafana does). */
export function targetUrl(match: RouteMatch, data: TemplateData, search: string): URL {
  const base = new URL(renderTemplate(match.route.url ?? '', data));
  base.pathname = joinUrlFragments(base.pathname, match.rest);
  base.search = search;
  return base;
}

/** The route headers, rendered (they replace any incoming header of the same name). */
export function routeHeaders(route: PluginRoute, data: TemplateData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of route.headers ?? []) {
    out[h.name.toLowerCase()] = renderTemplate(h.content, data);
  }
  return out;
}
