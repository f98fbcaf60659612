/**
 * /api/golden overhead: the proxy vs querying Prometheus directly for the same expressions (same range, step, in
 * parallel), side by side (ABAB…), both with the same HTTP client (undici). Target: ratio ≤ 1.15. A real Prometheus
 * scrapes a prom-client server with the real vLLM/TGI names, for a single pod and for a 200-pod fleet (where
 * Prometheus does real work, as in production); the proxy runs as its own process, as deployed: the Dockerfile's
 * esbuild bundle under NODE_ENV=production (proxy-child.ts; it used to run the sources under tsx).
 * On one pod the queries take ~1 ms, so the ratio is mostly the fixed cost of a second process: one more loopback
 * round trip and process wake-up, the calls re-issued from the proxy's event loop. So each case also measures that
 * floor side by side: a bare node:http + undici forwarder issuing only the same calls (bench/golden-floor.ts) vs
 * Prometheus direct.
 * Usage: tsx bench/proxy-golden.bench.ts   (HOPSCOPE_BENCH_REQUESTS per round, HOPSCOPE_BENCH_FLEETS="1,200",
 * HOPSCOPE_BENCH_PROXY=source to run the proxy from its sources under tsx)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { abCompare, abRow, report, smoke } from './lib/ab';
import { startProxyProcess } from './proxy-child';
import { goldenPlans } from '../backend-proxy/src/services/promql';
import { startPrometheus } from '../tests/support/real-servers';
import { startChainMetrics } from '../tests/integration/proxy/chain-metrics';

const REQUESTS = Number(process.env.HOPSCOPE_BENCH_REQUESTS ?? smoke(30, 1));
const FLEETS = (process.env.HOPSCOPE_BENCH_FLEETS ?? smoke('1,200', '1')).split(',').map(Number);
const rows = [];
const json = [];

/** The bare forwarder (golden-floor.ts) in its own process, as the proxy runs. */
async function startFloor(promUrl: string, plans: Record<string, string[]>): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'golden-floor.ts')], {
    env: { ...process.env, HOPSCOPE_PROMETHEUS_URL: promUrl, PLANS: JSON.stringify(plans), NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`golden-floor exited (${code}) before listening`)));
  });
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
    },
  };
}
for (const pods of FLEETS) {
  const chain = await startChainMetrics(pods);
  const prom = await startPrometheus([chain.target]);
  const proxy = await startProxyProcess({
    HOPSCOPE_PROMETHEUS_URL: prom.url,
    HOPSCOPE_EXPORTER_URLS: 'none',
    HOPSCOPE_CHAIN_CONTROL_URL: 'none',
  });
  const floor = await startFloor(
    prom.url,
    Object.fromEntries(
      (['vllm', 'tgi'] as const).map((b) => [b, goldenPlans({ backend: b, stepMs: 5000 }).plans.map((p) => p.query)])
    )
  );
  try {
    await new Promise((r) => setTimeout(r, smoke(8000, 0))); // a few scrapes (a smoke run needs none)
    const to = Math.floor(Date.now() / 5000) * 5000;
    const from = to - 5 * 60_000;
    const stepMs = 5000;
    for (const backend of ['vllm', 'tgi'] as const) {
      const { plans } = goldenPlans({ backend, stepMs });
      const direct = async (): Promise<number> => {
        const t0 = performance.now();
        for (let i = 0; i < REQUESTS; i++) {
          await Promise.all(
            plans.map(async (p) => {
              const u = `${prom.url}/api/v1/query_range?${new URLSearchParams({ query: p.query, start: String(from / 1000), end: String(to / 1000), step: String(stepMs / 1000) })}`;
              await (await request(u)).body.json();
            })
          );
        }
        return (performance.now() - t0) / REQUESTS;
      };
      const viaProxy = async (): Promise<number> => {
        const t0 = performance.now();
        for (let i = 0; i < REQUESTS; i++)
          await (await request(`${proxy.url}/api/golden?backend=${backend}&from=${from}&to=${to}&step=5s`)).body.json();
        return (performance.now() - t0) / REQUESTS;
      };
      const viaFloor = async (): Promise<number> => {
        const t0 = performance.now();
        for (let i = 0; i < REQUESTS; i++)
          await (await request(`${floor.url}/?backend=${backend}&from=${from}&to=${to}&stepMs=${stepMs}`)).body.json();
        return (performance.now() - t0) / REQUESTS;
      };
      await direct();
      await viaProxy();
      await viaFloor(); // warm-up
      const res = await abCompare({
        name: `proxy /api/golden ${backend}, ${pods} pod(s), ${plans.length} queries`,
        unit: 'ms/request',
        a: { label: 'Prometheus direct', run: direct },
        b: { label: 'via a second process', run: viaProxy },
        rounds: 7,
      });
      rows.push({ ...abRow(res), 'added ms': Math.round((res.b.median - res.a.median) * 100) / 100 });
      json.push(res);
      const fl = await abCompare({
        name: '  floor: bare forwarder, same calls',
        unit: 'ms/request',
        a: { label: 'Prometheus direct', run: direct },
        b: { label: 'via a second process', run: viaFloor },
        rounds: 7,
      });
      rows.push({ ...abRow(fl), 'added ms': Math.round((fl.b.median - fl.a.median) * 100) / 100 });
      json.push(fl);
    }
  } finally {
    floor.stop();
    await proxy.stop();
    await prom.stop();
    await chain.close();
  }
}
report('/api/golden overhead vs Prometheus direct (target ratio ≤ 1.15)', rows, json);
