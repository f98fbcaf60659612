/**
 * Starts the Grafana-compatible host for a test: in-process, on a free port, serving the built dist/ and pointed at
 * a proxy URL. Later e2e suites reuse it: `const host = await startTestHost({ proxyUrl }); ... await host.close()`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { startHost, type RunningHost } from '../host/server';

export const ROOT = join(import.meta.dirname, '..', '..');
export const DIST = join(ROOT, 'dist');
export const PLUGIN_ID = 'hopscope-rca-app';

/** Builds the plugin when dist/ has no module.js (e.g. a suite run on its own). Never rebuilds an existing dist/. */
export function ensurePluginBuilt(): void {
  if (!existsSync(join(DIST, 'module.js')) || !existsSync(join(DIST, 'plugin.json'))) {
    execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/build-plugin.ts')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
}

export interface TestHostOptions {
  /** Seeds jsonData.proxyUrl (default: a URL where nothing listens, so a forgotten proxy fails loudly). */
  proxyUrl?: string;
  proxyToken?: string;
  dist?: string;
  /** Serve the plugin from another base than `public/plugins/<id>` (as a CDN-served Grafana does). */
  pluginBaseUrl?: string;
  /** More plugin settings (jsonData), e.g. `{ prometheusDatasourceUid: 'prom' }`. */
  jsonData?: Record<string, unknown>;
}

export async function startTestHost(options: TestHostOptions = {}): Promise<RunningHost> {
  ensurePluginBuilt();
  return startHost({
    port: 0,
    proxyUrl: options.proxyUrl ?? 'http://127.0.0.1:9',
    proxyToken: options.proxyToken,
    dist: options.dist ?? DIST,
    pluginBaseUrl: options.pluginBaseUrl,
    jsonData: options.jsonData,
  });
}

/** URL of an app page in the host, e.g. appUrl(host, 'traces', { theme: 'light', query: { from: 'now-6h' } }). */
export function appUrl(
  host: RunningHost,
  page = '',
  options: { theme?: 'dark' | 'light'; query?: Record<string, string> } = {}
): string {
  const url = new URL(`/a/${PLUGIN_ID}/${page.replace(/^\/+/, '')}`, host.url);
  if (options.theme) {
    url.searchParams.set('theme', options.theme);
  }
  for (const [k, v] of Object.entries(options.query ?? {})) {
    url.searchParams.set(k, v);
  }
  return url.toString();
}

/** URL of the plugin's config page in the host (Grafana's /plugins/<id>). */
export function configUrl(host: RunningHost, theme?: 'dark' | 'light'): string {
  return new URL(`/plugins/${PLUGIN_ID}${theme ? `?theme=${theme}` : ''}`, host.url).toString();
}
