/**
 * The Grafana-compatible host (tests and demo only, never shipped): serves the app pages as Grafana would
 * (`/a/<id>/*`, `/plugins/<id>`), the built plugin from dist/ at `/public/plugins/<id>/`, Grafana's plugin-settings
 * API (in memory), and the data proxy `/api/plugin-proxy/<id>/*`, forwarded by reading the `routes` of the BUILT
 * dist/plugin.json and rendering their URL and header templates with the current settings.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { request as undiciRequest } from 'undici';

import { ensureClientBundle } from './clientBundle';
import {
  decide,
  extractProxyPath,
  routeHeaders,
  targetUrl,
  type OrgRole,
  type PluginRoute,
  type TemplateData,
} from './pluginRoutes';
import { loopbackHostGuard } from '../../contract/loopback-host';
import { PluginSettingsStore } from './settings';
import { settingsBodyProblem, settingsWriteRefusal } from './settingsWrite';

export interface HostOptions {
  /** 0 = any free port (tests). */
  port?: number;
  host?: string;
  /** Seeds jsonData.proxyUrl, as provisioning would. */
  proxyUrl?: string;
  /** Seeds secureJsonData.proxyToken. */
  proxyToken?: string;
  /** More jsonData to seed (e.g. `prometheusDatasourceUid`), as provisioning would. */
  jsonData?: Record<string, unknown>;
  /** The built plugin folder. */
  dist?: string;
  /** Log each request to stdout. */
  log?: boolean;
  /**
   * Where the plugin's files are served (Grafana: `public/plugins/<id>`; a CDN-served Grafana uses another base).
   * The plugin must load its lazy chunks from wherever module.js came from.
   */
  pluginBaseUrl?: string;
  /** The signed-in user's org role (default Admin): the page's boot data and the plugin routes' `reqRole` checks. */
  orgRole?: OrgRole;
  /**
   * Register the host's STAND-INS for Grafana's exposed components (add-to-dashboard form, create alert from panel;
   * client/standInExposedComponents.tsx). Off by default: a Grafana without them is what the app must handle first.
   */
  standInExposedComponents?: boolean;
}

export interface RunningHost {
  url: string;
  port: number;
  settings: PluginSettingsStore;
  close(): Promise<void>;
}

interface PluginJson {
  id: string;
  name: string;
  type: string;
  info: { version: string; description?: string; logos: { small: string; large: string } } & Record<string, unknown>;
  includes?: unknown[];
  routes?: PluginRoute[];
  dependencies?: unknown;
  extensions?: unknown;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'cookie',
  'content-length',
]);

function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

function escapeForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function bootData(
  theme: 'dark' | 'light',
  plugin: PluginJson,
  baseUrl: string,
  orgRole: OrgRole,
  datasources: Record<string, unknown>
): unknown {
  return {
    settings: {
      appSubUrl: '',
      appUrl: '/',
      buildInfo: {
        version: '12.4.10',
        commit: 'hopscope-host',
        env: 'production',
        edition: 'Open Source',
        latestVersion: '',
        hasUpdate: false,
        hideVersion: false,
      },
      featureToggles: {},
      datasources,
      panels: {},
      // Grafana's boot data carries each app's extensions and dependencies from its plugin.json (AppPluginConfig).
      apps: {
        [plugin.id]: {
          id: plugin.id,
          path: `${baseUrl}/module.js`,
          version: plugin.info.version,
          preload: false,
          angular: { detected: false },
          extensions: plugin.extensions ?? {
            addedLinks: [],
            addedComponents: [],
            exposedComponents: [],
            extensionPoints: [],
            addedFunctions: [],
          },
          dependencies: plugin.dependencies,
        },
      },
      minRefreshInterval: '5s',
      namespace: 'default',
      defaultDatasource: '',
      bootData: undefined,
    },
    user: {
      id: 1,
      uid: 'admin',
      login: 'admin',
      name: 'admin',
      email: 'admin@localhost',
      isSignedIn: true,
      orgId: 1,
      orgName: 'Main Org.',
      orgRole,
      isGrafanaAdmin: orgRole === 'Admin',
      theme,
      timezone: 'browser',
      weekStart: '',
      locale: 'en-US',
      language: 'en-US',
      regionalFormat: 'en-US',
      permissions: {},
    },
    navTree: [],
    assets: { dark: '', light: '' },
  };
}

/**
 * The data sources the plugin settings name (`prometheusDatasourceUid`, `tempoDatasourceUid`), as Grafana's boot data
 * lists configured data sources (by name): instance settings only — the host cannot query them — so a data source
 * variable offers them and links name them as they would in a Grafana that has them.
 */
function namedDataSources(jsonData: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const add = (uid: unknown, type: 'prometheus' | 'tempo', name: string) => {
    if (typeof uid === 'string' && uid) {
      out[`${name} (${uid})`] = {
        id: Object.keys(out).length + 10,
        uid,
        type,
        name: `${name} (${uid})`,
        access: 'proxy',
        readOnly: true,
        jsonData: {},
        isDefault: type === 'prometheus',
        meta: {
          id: type,
          type: 'datasource',
          name,
          metrics: true,
          info: { logos: { small: '', large: '' } },
          module: '',
          baseUrl: '',
        },
      };
    }
  };
  add(jsonData.prometheusDatasourceUid, 'prometheus', 'Prometheus');
  add(jsonData.tempoDatasourceUid, 'tempo', 'Tempo');
  return out;
}

function hostPage(
  theme: 'dark' | 'light',
  plugin: PluginJson,
  clientUrl: string,
  baseUrl: string,
  orgRole: OrgRole,
  standIns: boolean,
  datasources: Record<string, unknown>
): string {
  return `<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="utf-8">
<base href="/">
<meta name="viewport" content="width=device-width">
<title>${plugin.name} - Grafana</title>
<link rel="icon" href="/${baseUrl}/${plugin.info.logos.small}">
<style>body{margin:0;background:${theme === 'dark' ? '#111217' : '#f4f5f5'}}</style>
<link rel="stylesheet" href="/public/build/uPlot.min.css">
</head>
<body class="theme-${theme}" data-host-state="loading">
<div id="reactRoot"></div>
<script>
window.grafanaBootData = ${escapeForScript(bootData(theme, plugin, baseUrl, orgRole, datasources))};
window.hopscopeHost = ${escapeForScript({ pluginId: plugin.id, standInExposedComponents: standIns })};
</script>
<script src="${clientUrl}"></script>
</body>
</html>`;
}

export async function startHost(options: HostOptions = {}): Promise<RunningHost> {
  const dist = resolve(options.dist ?? join(import.meta.dirname, '..', '..', 'dist'));
  const readPluginJson = (): PluginJson => JSON.parse(readFileSync(join(dist, 'plugin.json'), 'utf8')) as PluginJson;
  const plugin = readPluginJson();
  const baseUrl = (options.pluginBaseUrl ?? `public/plugins/${plugin.id}`).replace(/^\/+|\/+$/g, '');
  const orgRole: OrgRole = options.orgRole ?? 'Admin';
  const clientFile = await ensureClientBundle();
  const clientUrl = `/public/host/${clientFile.split('/').pop()}`;
  const settings = new PluginSettingsStore({
    jsonData: { ...(options.proxyUrl ? { proxyUrl: options.proxyUrl } : {}), ...options.jsonData },
    secureJsonData: options.proxyToken ? { proxyToken: options.proxyToken } : {},
  });

  const app = express();
  app.disable('x-powered-by');
  // The host has no login and forwards the proxy token: a rebound DNS name (a web page's own name re-resolved to
  // 127.0.0.1) must not reach it. Only Host headers naming loopback are served (contract/loopback-host.ts).
  app.use(
    loopbackHostGuard('the Hopscope host page', 'open it at http://127.0.0.1:<port>/ or http://localhost:<port>/')
  );
  if (options.log) {
    app.use((req, _res, next) => {
      console.log(`${req.method} ${req.originalUrl}`);
      next();
    });
  }

  app.get('/api/health', (_req, res) => {
    res.json({ database: 'ok', version: '12.4.10', commit: 'hopscope-host' });
  });

  app.get(`/api/plugins/${plugin.id}/settings`, (_req, res) => {
    const current = readPluginJson();
    res.json({
      id: current.id,
      name: current.name,
      type: current.type,
      info: current.info,
      includes: current.includes ?? [],
      dependencies: current.dependencies,
      module: `${baseUrl}/module.js`,
      baseUrl,
      enabled: settings.enabled,
      pinned: settings.pinned,
      jsonData: settings.jsonData,
      secureJsonFields: settings.secureJsonFields,
      hasUpdate: false,
      state: '',
      signature: 'unsigned',
      defaultNavUrl: `/a/${current.id}/overview`,
      latestVersion: '',
      angularDetected: false,
    });
  });

  // Admin only, same-origin only, proxyUrl http(s) only (settingsWrite.ts): the settings decide where the token goes.
  app.post(
    `/api/plugins/${plugin.id}/settings`,
    (req, res, next) => {
      const refusal = settingsWriteRefusal(req.headers, orgRole);
      if (refusal) {
        sendError(res, refusal.status, refusal.code, refusal.message);
        return;
      }
      next();
    },
    express.json({ limit: '1mb' }),
    (req, res) => {
      const body = req.body as unknown;
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        sendError(res, 400, 'bad_request', 'Expected a JSON object');
        return;
      }
      const problem = settingsBodyProblem(body);
      if (problem) {
        sendError(res, 400, 'bad_request', problem);
        return;
      }
      settings.update(body);
      res.json({ message: 'Plugin settings updated' });
    }
  );

  // The data proxy: what Grafana's pluginproxy does for app plugins, driven by the built plugin.json routes (first
  // route whose method and path match; its reqRole against the user's org role). Its own errors are Grafana's
  // `{message}` bodies, with Grafana's statuses and messages.
  app.all(`/api/plugin-proxy/${plugin.id}/{*rest}`, async (req, res) => {
    const url = new URL(req.originalUrl, 'http://host.invalid');
    const proxyPath = extractProxyPath(url.pathname);
    const routes = readPluginJson().routes ?? [];
    const decision = decide(routes, req.method, proxyPath, orgRole);
    if (decision.status !== 200) {
      res.status(decision.status).json({ message: decision.message });
      return;
    }
    const { match } = decision;
    const data: TemplateData = { JsonData: settings.jsonData, SecureJsonData: settings.secureJsonData };
    let target: URL;
    let headers: Record<string, string>;
    try {
      target = targetUrl(match, data, url.search);
      headers = routeHeaders(match.route, data);
    } catch (err) {
      sendError(res, 500, 'route_config', `Could not render the plugin route: ${(err as Error).message}`);
      return;
    }
    const forward: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && typeof value === 'string') {
        forward[name] = value;
      }
    }
    Object.assign(forward, headers);
    const hasBody = !['GET', 'HEAD'].includes(req.method);
    try {
      const upstream = await undiciRequest(target, {
        method: req.method as 'GET',
        headers: forward,
        body: hasBody ? req : undefined,
        headersTimeout: 60_000,
        bodyTimeout: 0,
      });
      res.status(upstream.statusCode);
      for (const [name, value] of Object.entries(upstream.headers)) {
        if (!HOP_BY_HOP.has(name) && value !== undefined) {
          res.setHeader(name, value);
        }
      }
      await pipeline(upstream.body, res);
    } catch (err) {
      if (!res.headersSent) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code ?? '';
        sendError(
          res,
          502,
          'proxy_unreachable',
          `The Hopscope proxy at ${target.origin} did not answer (${cause || (err as Error).message})`
        );
      } else {
        res.destroy(err as Error);
      }
    }
  });

  // Grafana serves Inter and Roboto Mono from public/fonts (GlobalStyles' @font-face); the host maps them to the
  // same fonts from @fontsource, so text renders as in Grafana.
  const fontFiles: Record<string, string> = {
    'inter/Inter-Regular.woff2': '@fontsource/inter/files/inter-latin-400-normal.woff2',
    'inter/Inter-Medium.woff2': '@fontsource/inter/files/inter-latin-500-normal.woff2',
    'inter/Inter-Italic.woff2': '@fontsource/inter/files/inter-latin-400-italic.woff2',
    'inter/Inter-MediumItalic.woff2': '@fontsource/inter/files/inter-latin-500-italic.woff2',
  };
  app.get('/public/fonts/{*font}', (req, res) => {
    const name = req.path.slice('/public/fonts/'.length);
    const file =
      fontFiles[name] ??
      (name.startsWith('roboto/') ? '@fontsource/roboto-mono/files/roboto-mono-latin-400-normal.woff2' : undefined);
    if (!file) {
      sendError(res, 404, 'not_found', `No font ${name}`);
      return;
    }
    res.setHeader('cache-control', 'public, max-age=86400');
    res.sendFile(join(import.meta.dirname, '..', '..', 'node_modules', file));
  });

  // Grafana's own bundle carries uPlot's base stylesheet (TimeSeries needs it to lay out); the host serves the same file.
  app.get('/public/build/uPlot.min.css', (_req, res) => {
    res.setHeader('cache-control', 'public, max-age=86400');
    res.sendFile(join(import.meta.dirname, '..', '..', 'node_modules', 'uplot', 'dist', 'uPlot.min.css'));
  });

  // Three icons @grafana/ui itself uses (loading spinner, time picker, and PanelChrome's "cancel query" shown on a
  // panel loading for over 2 s: sync-slash, drawn here as sync.svg crossed out) are in Grafana's build but not in the package:
  // the host draws them. Any other missing icon stays a 404, so a page using one is caught by the tests.
  const synthesizedIcons: Record<string, string> = {
    'unicons/spinner.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 2a10 10 0 1 0 10 10h-2a8 8 0 1 1-8-8z"/></svg>',
    'unicons/angle-double-left.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g transform="matrix(-1 0 0 1 24 0)"><path d="M8.46,8.29A1,1,0,1,0,7,9.71L9.34,12,7,14.29a1,1,0,0,0,0,1.42,1,1,0,0,0,1.42,0l3-3a1,1,0,0,0,0-1.42Zm8.5,3-3-3a1,1,0,0,0-1.42,1.42L14.84,12l-2.3,2.29a1,1,0,0,0,0,1.42,1,1,0,0,0,1.42,0l3-3A1,1,0,0,0,17,11.29Z"/></g></svg>',
    'unicons/sync-slash.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M19.91,15.51H15.38a1,1,0,0,0,0,2h2.4A8,8,0,0,1,4,12a1,1,0,0,0-2,0,10,10,0,0,0,16.88,7.23V21a1,1,0,0,0,2,0V16.5A1,1,0,0,0,19.91,15.51ZM12,2A10,10,0,0,0,5.12,4.77V3a1,1,0,0,0-2,0V7.5a1,1,0,0,0,1,1h4.5a1,1,0,0,0,0-2H6.22A8,8,0,0,1,20,12a1,1,0,0,0,2,0A10,10,0,0,0,12,2Z"/><path d="M3.3,2.3a1,1,0,0,0-1.4,1.4l18.8,18.8a1,1,0,0,0,1.4-1.4Z"/></svg>',
  };
  app.get('/public/build/img/icons/{*icon}', (req, res, next) => {
    const svg = synthesizedIcons[req.path.slice('/public/build/img/icons/'.length)];
    if (!svg) {
      next();
      return;
    }
    res.type('image/svg+xml').setHeader('cache-control', 'public, max-age=86400');
    res.send(svg);
  });
  // @grafana/ui's <Icon> fetches SVGs from public/build/img/icons/: the same files ship in the package.
  app.use(
    '/public/build/img/icons',
    express.static(join(import.meta.dirname, '..', '..', 'node_modules/@grafana/ui/dist/public/img/icons'), {
      fallthrough: false,
      maxAge: '1d',
    })
  );

  app.use(`/${baseUrl}`, express.static(dist, { fallthrough: false, index: false }));
  app.get(clientUrl, (_req, res) => {
    res.setHeader('cache-control', 'public, max-age=31536000, immutable');
    res.sendFile(clientFile, { dotfiles: 'allow' });
  });

  const page = (req: Request, res: Response) => {
    const theme = req.query.theme === 'light' ? 'light' : 'dark';
    res
      .type('html')
      .send(
        hostPage(
          theme,
          readPluginJson(),
          clientUrl,
          baseUrl,
          orgRole,
          options.standInExposedComponents === true,
          namedDataSources(settings.jsonData)
        )
      );
  };
  // The app, its config page, and the host's own page of an extension point (client/ExtensionPointPage.tsx).
  app.get(['/a/{*rest}', `/plugins/${plugin.id}`, '/host/extension-point'], page);
  app.get('/', (req, res) => {
    const query = new URL(req.originalUrl, 'http://host.invalid').search;
    res.redirect(`/a/${plugin.id}/${query}`);
  });

  app.use((req, res) => sendError(res, 404, 'not_found', `Nothing at ${req.method} ${req.path}`));
  app.use((err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const status = err.status && err.status >= 400 ? err.status : 500;
    sendError(res, status, status === 404 ? 'not_found' : 'internal', err.message);
  });

  const server = app.listen(options.port ?? 3300, options.host ?? '127.0.0.1');
  await new Promise<void>((ok, fail) => {
    server.once('listening', ok);
    server.once('error', fail);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    settings,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
