/**
 * The demo's steady load, recorded as a load-test run: `hopscope-load --scenario demo-steady` (4 requests/s for a day,
 * HOPSCOPE_DEMO_RPS overrides the rate) against the chain's gateway, registered with the proxy under a run id of its
 * start time, heartbeats while it runs, its client metrics a scrape target the demo's Prometheus finds through the
 * proxy's HTTP SD (/api/runs/targets). Stopping the demo stops it first, so it posts its run (aborted, with its
 * summary) while the proxy still runs.
 */
import { join } from 'node:path';
import type { DemoContext, DemoPart } from './types';

const pad = (n: number): string => String(n).padStart(2, '0');
const stamp = (d: Date): string =>
  `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`;
const runId = `demo-steady-${stamp(new Date())}`;
const proxy = `http://127.0.0.1:${process.env.HOPSCOPE_PROXY_PORT ?? '3301'}`;

export function part(ctx: DemoContext): DemoPart {
  const gateway = `http://127.0.0.1:${process.env.HOPSCOPE_GATEWAY_PORT ?? '3310'}`;
  const control =
    process.env.HOPSCOPE_CHAIN_CONTROL_URL ?? `http://127.0.0.1:${process.env.HOPSCOPE_CONTROL_PORT ?? '3319'}`;
  const rps = process.env.HOPSCOPE_DEMO_RPS;
  return {
    name: 'loadgen',
    order: 40,
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      join(ctx.root, 'loadgen/src/cli.ts'),
      '--scenario',
      'demo-steady',
      '--run-id',
      runId,
      '--worker-id',
      'demo',
      '--target',
      gateway,
      '--control',
      control,
      '--report',
      proxy,
      '--metrics',
      'prometheus',
      '--metrics-host',
      '127.0.0.1',
      '--quiet',
      '--json',
      join(ctx.dataDir, `${runId}.json`),
      ...(rps ? ['--rps', rps] : []),
    ],
    // Ready once the proxy has the run (the readiness probe carries no token: with one, the demo does not wait for it).
    ...(process.env.HOPSCOPE_PROXY_TOKEN ? {} : { readyUrl: `${proxy}/api/runs/${runId}` }),
  };
}

/** For the demo's banner. */
export function notes(): string[] {
  return [`The steady load is load-test run ${runId}: ${proxy}/api/runs/${runId} (and the app's Runs page)`];
}
