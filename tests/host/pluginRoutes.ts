/**
 * Grafana's app-plugin data proxy, reduced to what plugin.json `routes` mean (pkg/api/pluginproxy/pluginproxy.go,
 * `HandleRequest`, and pkg/web/tree.go, the router it matches paths with):
 * - the proxy path is what follows `/api/plugin-proxy/<id>/` in the escaped request path;
 * - routes are tried in order; a route whose `method` is set, not `*`, and not exactly the request's method (a plain
 *   string comparison: `GET,POST` or `get` match nothing) is skipped;
 * - its `path` is one pattern of Grafana's router: static segments, `:name` (one segment), `*` (the rest, at least one
 *   segment); leading and trailing slashes of the request path are ignored;
 * - the FIRST route whose method and path match decides: a user without its `reqRole` gets 403 "plugin proxy route
 *   access denied" (no later route is tried); none matching is 404 "plugin route match not found";
 * - the target is the route `url` rendered with the plugin settings, joined with what `*` matched (nothing when the
 *   pattern has no `*`), the query string kept; the route `headers` are rendered and set.
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

/** An org role as Grafana names them (pkg/apimachinery/identity roletype: None < Viewer < Editor < Admin). */
export type OrgRole = 'None' | 'Viewer' | 'Editor' | 'Admin';

const ROLE_PRECEDENCE: Record<OrgRole, number> = { None: 10, Viewer: 20, Editor: 30, Admin: 40 };

/** `RoleType.IsValid`: one of the four names, exactly. */
export function isValidRole(role: string | undefined): role is OrgRole {
  return role !== undefined && Object.hasOwn(ROLE_PRECEDENCE, role);
}

/** `RoleType.Includes`: a role includes every role of lower or equal precedence. */
export function roleIncludes(user: OrgRole, required: OrgRole): boolean {
  return ROLE_PRECEDENCE[user] >= ROLE_PRECEDENCE[required];
}

/** `hasAccessToRoute` without RBAC (`reqAction` is not used by this plugin): a valid `reqRole` must be included. */
export function hasAccessToRoute(route: PluginRoute, user: OrgRole): boolean {
  return isValidRole(route.reqRole) ? roleIncludes(user, route.reqRole) : true;
}

/** Grafana's pluginProxyPathRegexp: the escaped path after `/api/plugin-proxy/<id>/`. */
export function extractProxyPath(escapedPath: string): string {
  return escapedPath.replace(/^\/api\/plugin-proxy\/[\w-]+\/?/, '');
}

/**
 * One route pattern of Grafana's router (web.NewTree().Add(pattern); t.Match(path)) against a path: `*` params or
 * undefined when it does not match. Covers what plugin routes use: static segments, `:name`, and `*` as the last
 * segment; a pattern with regexp segments is refused loudly rather than matched differently from Grafana.
 */
export function matchPattern(pattern: string, path: string): { glob?: string } | undefined {
  const segments = pattern.replace(/\/+$/, '').replace(/^\/+/, '').split('/');
  const url = path.replace(/^\/+/, '').replace(/\/+$/, '');
  for (const s of segments) {
    if (/[()?]/.test(s) || (s.includes(':') && !/^:[a-zA-Z0-9]+$/.test(s)) || (s.includes('*') && s !== '*')) {
      throw new Error(`route path segment "${s}" is not supported by the host (static, :name or * only)`);
    }
  }
  const parts = url.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    const last = i === segments.length - 1;
    if (s === '*') {
      if (!last) {
        throw new Error('the host supports * as the last segment of a route path only');
      }
      // The tree's match-all leaf: what remains, one segment or more (an empty remainder does not match).
      const rest = i < parts.length ? unescape(parts.slice(i).join('/')) : undefined;
      return rest ? { glob: rest } : undefined;
    }
    const part = i < parts.length ? unescape(parts[i]) : undefined;
    if (part === undefined || (s.startsWith(':') ? part === '' : part !== s)) {
      return undefined;
    }
    if (last && parts.length !== segments.length) {
      return undefined;
    }
  }
  return {};
}

/** Go's url.PathUnescape; a malformed escape does not match (undefined), as in the tree. */
function unescape(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** The first route of plugin.json that serves `method proxyPath`, or undefined (Grafana answers 404). */
export function matchRoute(routes: PluginRoute[], method: string, proxyPath: string): RouteMatch | undefined {
  for (const route of routes) {
    // pkg/api/pluginproxy: `route.Method != "" && route.Method != "*" && route.Method != proxy.req.Method` — exact.
    if (route.method && route.method !== '*' && route.method !== method) {
      continue;
    }
    const m = matchPattern(route.path, proxyPath);
    if (!m) {
      continue;
    }
    return { route, rest: m.glob ?? '' };
  }
  return undefined;
}

export type ProxyDecision =
  | { status: 200; match: RouteMatch }
  | { status: 403; message: 'plugin proxy route access denied' }
  | { status: 404; message: 'plugin route match not found' };

/** What Grafana does with a request to the plugin proxy: the matched route, or its 403 / 404 (first match decides). */
export function decide(routes: PluginRoute[], method: string, proxyPath: string, user: OrgRole): ProxyDecision {
  const match = matchRoute(routes, method, proxyPath);
  if (!match) {
    return { status: 404, message: 'plugin route match not found' };
  }
  return hasAccessToRoute(match.route, user)
    ? { status: 200, match }
    : { status: 403, message: 'plugin proxy route access denied' };
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
