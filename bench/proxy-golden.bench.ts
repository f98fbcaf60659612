/**
 * /api/golden overhead: the proxy vs querying Prometheus directly for the same expressions (same range, step, in
 * parallel), side by side (ABAB…), both with the same HTTP client (undici). Target: ratio ≤ 1.15. Real Prometheus scraping a prom-client server with the
 * real vLLM/TGI names. Usage: tsx bench/proxy-golden.bench.ts
 */
import { request } from 'undici';
import { abCompare, abRow, report } from './lib/ab';
import { startProxyProcess } from './proxy-child';
import { goldenPlans } from '../backend-proxy/src/routes/golden';
import { startPrometheus } from '../tests/integration/proxy/real-servers';
import { startChainMetrics } from '../tests/integration/proxy/chain-metrics';

const REQUESTS = Number(process.env.HOPSCOPE_BENCH_REQUESTS ?? 40);
const chain = await startChainMetrics();
const prom = await startPrometheus([chain.target]);
const proxy = await startProxyProcess({ HOPSCOPE_PROMETHEUS_URL: prom.url, HOPSCOPE_EXPORTER_URLS: 'none', HOPSCOPE_CHAIN_CONTROL_URL: 'none' });
try {
  await new Promise((r) => setTimeout(r, 8000)); // a few scrapes
  const to = Date.now();
  const from = to - 5 * 60_000;
  const stepMs = 5000;
  const rows = [];
  const json = [];
  for (const backend of ['vllm', 'tgi'] as const) {
    const { plans } = goldenPlans({ backend, stepMs });
    const direct = async (): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < REQUESTS; i++) {
        await Promise.all(plans.map(async (p) => {
          const u = `${prom.url}/api/v1/query_range?${new URLSearchParams({ query: p.query, start: String(from / 1000), end: String(to / 1000), step: String(stepMs / 1000) })}`;
          const r = await request(u);
          await r.body.json();
        }));
      }
      return (performance.now() - t0) / REQUESTS;
    };
    const viaProxy = async (): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < REQUESTS; i++) {
        const r = await request(`${proxy.url}/api/golden?backend=${backend}&from=${from}&to=${to}&step=5s`);
        await r.body.json();
      }
      return (performance.now() - t0) / REQUESTS;
    };
    await direct(); await viaProxy(); // warm-up
    const res = await abCompare({ name: `golden ${backend} (${plans.length} queries)`, unit: 'ms/request', a: { label: 'Prometheus direct', run: direct }, b: { label: 'proxy /api/golden', run: viaProxy }, rounds: 7 });
    rows.push(abRow(res));
    json.push(res);
  }
  report('/api/golden overhead vs Prometheus direct (target ratio ≤ 1.15)', rows, json);
} finally {
  await proxy.stop();
  await prom.stop();
  await chain.close();
}
