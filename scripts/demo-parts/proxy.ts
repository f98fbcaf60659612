/** The backend proxy in the demo: default port 3301, embedded trace store, the demo's Prometheus on 3390. */
import { join } from 'node:path';
import type { DemoContext, DemoPart } from './types';

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
    },
    // /metrics needs no token, so readiness works with HOPSCOPE_PROXY_TOKEN set.
    readyUrl: `http://127.0.0.1:${port}/metrics`,
  };
}
