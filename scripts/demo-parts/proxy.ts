/**
 * The backend proxy in the demo: default port 3301, embedded trace store, the demo's Prometheus on 3390, and its
 * database (runs, alert state) embedded in a per-user directory that outlives the demo, so recorded runs survive a
 * restart: HOPSCOPE_DATA_DIR, default $XDG_DATA_HOME/hopscope/demo (~/.local/share/hopscope/demo); PostgreSQL instead
 * when HOPSCOPE_DATABASE_URL is set.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SCRAPE_INTERVAL } from './prometheus';
import type { DemoContext, DemoPart } from './types';

/** The URL without its password, for the banner. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparseable URL)';
  }
}

function dataDir(): string {
  if (process.env.HOPSCOPE_DATA_DIR) return process.env.HOPSCOPE_DATA_DIR;
  return join(process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'hopscope', 'demo');
}

export function part(ctx: DemoContext): DemoPart {
  const port = process.env.HOPSCOPE_PROXY_PORT ?? '3301';
  return {
    name: 'proxy',
    order: 20,
    command: process.execPath,
    args: ['--import', 'tsx', join(ctx.root, 'backend-proxy/src/main.ts')],
    env: {
      HOPSCOPE_PROXY_PORT: port,
      HOPSCOPE_PROMETHEUS_URL: process.env.HOPSCOPE_PROMETHEUS_URL ?? 'http://127.0.0.1:3390',
      HOPSCOPE_EXPORTER_URLS: process.env.HOPSCOPE_EXPORTER_URLS ?? 'http://127.0.0.1:3302',
      HOPSCOPE_CHAIN_CONTROL_URL: process.env.HOPSCOPE_CHAIN_CONTROL_URL ?? 'http://127.0.0.1:3319',
      HOPSCOPE_DATA_DIR: dataDir(),
      // The demo's Prometheus scrapes at this interval: the proxy's rate windows follow it.
      HOPSCOPE_SCRAPE_INTERVAL: SCRAPE_INTERVAL,
    },
    // /metrics needs no token, so readiness works with HOPSCOPE_PROXY_TOKEN set.
    readyUrl: `http://127.0.0.1:${port}/metrics`,
    ports: [{ port: Number(port), env: 'HOPSCOPE_PROXY_PORT' }],
  };
}

/** For the demo's banner: where the runs are kept. */
export function notes(): string[] {
  const url = process.env.HOPSCOPE_DATABASE_URL;
  return [
    url
      ? `Runs and alert state are kept in PostgreSQL at ${redactUrl(url)} (HOPSCOPE_DATABASE_URL)`
      : `Runs and alert state are kept in ${dataDir()} (HOPSCOPE_DATA_DIR); they survive a restart`,
  ];
}
