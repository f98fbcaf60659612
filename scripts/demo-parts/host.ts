/**
 * The Grafana-compatible host on 127.0.0.1:3300: loads the built dist/module.js as Grafana does and forwards the
 * plugin's data-proxy route to the backend proxy on 3301 (with HOPSCOPE_PROXY_TOKEN as the token when set).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { DemoContext, DemoPart } from './types';

export function part(ctx: DemoContext): DemoPart {
  const port = process.env.HOPSCOPE_HOST_PORT ?? '3300';
  const proxyUrl =
    process.env.HOPSCOPE_HOST_PROXY_URL ?? `http://127.0.0.1:${process.env.HOPSCOPE_PROXY_PORT ?? '3301'}`;
  return {
    name: 'host',
    order: 50,
    command: process.execPath,
    args: ['--import', 'tsx', join(ctx.root, 'tests/host/main.ts')],
    env: { HOPSCOPE_HOST_PORT: port, HOPSCOPE_HOST_PROXY_URL: proxyUrl, HOPSCOPE_HOST_DIST: join(ctx.root, 'dist') },
    readyUrl: `http://127.0.0.1:${port}/api/health`,
    openUrl: `http://127.0.0.1:${port}/a/hopscope-rca-app/`,
    ports: [{ port: Number(port), env: 'HOPSCOPE_HOST_PORT' }],
    async available() {
      return existsSync(join(ctx.root, 'dist', 'module.js'))
        ? true
        : 'dist/module.js is missing: run `npm run build` first';
    },
  };
}
