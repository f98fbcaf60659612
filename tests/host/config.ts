/**
 * The host's configuration: defaults, environment overrides (HOPSCOPE_HOST_PORT, HOPSCOPE_HOST_BIND,
 * HOPSCOPE_HOST_PROXY_URL, HOPSCOPE_HOST_DIST, HOPSCOPE_HOST_ROLE), then command-line flags; a clear error for every bad value.
 */
import { parseArgs } from 'node:util';

import { isValidRole, type OrgRole } from './pluginRoutes';

export const HELP = `Usage: tsx tests/host/main.ts [options]

The Grafana-compatible host page for the Hopscope app plugin (tests and local preview; not shipped).
Serves /a/hopscope-rca-app/* and /plugins/hopscope-rca-app, the built plugin from --dist, the plugin settings API,
and forwards /api/plugin-proxy/hopscope-rca-app/* using the routes of the built plugin.json.

Options:
  --port <n>          port to listen on (default 3300; 0 = any free port)   env HOPSCOPE_HOST_PORT
  --bind <addr>       address to bind (default 127.0.0.1)                    env HOPSCOPE_HOST_BIND
  --proxy-url <url>   backend proxy URL seeding jsonData.proxyUrl (default http://127.0.0.1:3301)
                                                                             env HOPSCOPE_HOST_PROXY_URL
  --proxy-token <t>   token seeding secureJsonData.proxyToken (default none) env HOPSCOPE_PROXY_TOKEN
  --dist <dir>        the built plugin (default ./dist)                      env HOPSCOPE_HOST_DIST
  --role <role>       the signed-in user's org role: Admin (default), Editor, Viewer or None
                      (the plugin routes' reqRole is checked against it, as Grafana does)
                                                                             env HOPSCOPE_HOST_ROLE
  --log               log every request
  --help              this text

Open http://127.0.0.1:3300/a/hopscope-rca-app/ (add ?theme=light for the light theme).`;

export interface HostConfig {
  port: number;
  bind: string;
  proxyUrl: string;
  proxyToken?: string;
  dist: string;
  orgRole: OrgRole;
  log: boolean;
  help: boolean;
}

export class ConfigError extends Error {}

function parsePort(value: string, name: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535, got "${value}"`);
  }
  return n;
}

function parseUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL like http://127.0.0.1:3301, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be http:// or https://, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): HostConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        bind: { type: 'string' },
        'proxy-url': { type: 'string' },
        'proxy-token': { type: 'string' },
        dist: { type: 'string' },
        role: { type: 'string' },
        log: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (see --help)`);
  }
  const str = (flag: string, envName: string, fallback?: string): string | undefined =>
    (values[flag] as string | undefined) ?? (env[envName] || undefined) ?? fallback;
  const portText = str('port', 'HOPSCOPE_HOST_PORT', '3300')!;
  const role = str('role', 'HOPSCOPE_HOST_ROLE', 'Admin')!;
  if (!isValidRole(role)) {
    throw new ConfigError(
      `${values.role !== undefined ? '--role' : 'HOPSCOPE_HOST_ROLE'} must be Admin, Editor, Viewer or None, got "${role}"`
    );
  }
  return {
    port: parsePort(portText, values.port !== undefined ? '--port' : 'HOPSCOPE_HOST_PORT'),
    bind: str('bind', 'HOPSCOPE_HOST_BIND', '127.0.0.1')!,
    proxyUrl: parseUrl(str('proxy-url', 'HOPSCOPE_HOST_PROXY_URL', 'http://127.0.0.1:3301')!, '--proxy-url'),
    proxyToken: str('proxy-token', 'HOPSCOPE_PROXY_TOKEN'),
    dist: str('dist', 'HOPSCOPE_HOST_DIST', 'dist')!,
    orgRole: role,
    log: Boolean(values.log),
    help: Boolean(values.help),
  };
}
