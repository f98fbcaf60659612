/**
 * 200 concurrent dashboard clients for 60 s (HOPSCOPE_BENCH_DURATION_S / HOPSCOPE_BENCH_CONNECTIONS to change):
 * a dashboard's mix of /api/golden, /api/gpu/heatmap, /api/services, /api/traces, a trace and its root cause,
 * against the proxy as its own process with a real Prometheus and a filled embedded store.
 * Prints requests/s, latency percentiles, errors, and the proxy's RSS sampled every second (bounded memory).
 */
import autocannon from 'autocannon';
import { report, smoke, SMOKE } from './lib/ab';
import { startProxyProcess } from './proxy-child';
import { startPrometheus } from '../tests/support/real-servers';
import { startChainMetrics } from '../tests/integration/proxy/chain-metrics';
import { chainTrace, hex, otlp } from '../tests/support/otlp-spans';

const DURATION = Number(process.env.HOPSCOPE_BENCH_DURATION_S ?? smoke(60, 1));
const CONNECTIONS = Number(process.env.HOPSCOPE_BENCH_CONNECTIONS ?? smoke(200, 4));
const chain = await startChainMetrics();
const prom = await startPrometheus([chain.target]);
const proxy = await startProxyProcess({
  HOPSCOPE_PROMETHEUS_URL: prom.url,
  HOPSCOPE_EXPORTER_URLS: 'none',
  HOPSCOPE_CHAIN_CONTROL_URL: 'none',
  HOPSCOPE_STORE_MAX_SPANS: '50000',
});

async function rssMb(): Promise<number> {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  const m = /^hopscope_proxy_process_resident_memory_bytes (\S+)/m.exec(text);
  return m ? Number(m[1]) / 1024 / 1024 : NaN;
}

try {
  const now = Date.now();
  // 5,000 traces × 3 spans, in batches, plus one slow trace to root-cause (a smoke run, bench/lib/ab.ts: the batch
  // holding the slow trace only).
  for (const b of smoke([...Array(50).keys()], [42])) {
    const spans = [];
    for (let i = 0; i < 100; i++) {
      const k = b * 100 + i;
      spans.push(...chainTrace(k, now - 600_000 + k * 100, k === 4242 ? 2000 : 100 + (k % 9), k === 4242 ? 2 : 1));
    }
    await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlp(spans)),
    });
  }
  await new Promise((r) => setTimeout(r, smoke(5000, 0)));
  const range = 'from=now-15m&to=now';
  const paths = [
    `/api/golden?${range}`,
    `/api/gpu/heatmap?${range}`,
    `/api/services?from=now-5m&to=now`,
    `/api/traces?${range}&minDurationMs=500`,
    `/api/traces/${hex(4243, 32)}`,
    `/api/traces/${hex(4243, 32)}/rca`,
  ];
  const rss: number[] = [await rssMb()];
  const sampler = setInterval(() => {
    void rssMb().then(
      (v) => rss.push(v),
      () => undefined
    );
  }, 1000);
  const result = await autocannon({
    url: proxy.url,
    connections: CONNECTIONS,
    duration: DURATION,
    // A smoke run: each path twice, however long they take (a cold proxy on a busy machine may answer none in 1 s).
    ...(SMOKE ? { amount: 2 * paths.length } : {}),
    requests: paths.map((path) => ({ method: 'GET', path })),
    timeout: 30,
  });
  clearInterval(sampler);
  rss.push(await rssMb());
  const l = result.latency;
  const rows = [
    {
      connections: CONNECTIONS,
      'duration s': DURATION,
      requests: result.requests.total,
      'req/s': result.requests.average,
      'p50 ms': l.p50,
      'p90 ms': l.p90,
      'p99 ms': l.p99,
      'max ms': l.max,
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      'rss start MB': Math.round(rss[0]),
      'rss max MB': Math.round(Math.max(...rss.filter(Number.isFinite))),
      'rss end MB': Math.round(rss.at(-1)!),
    },
  ];
  report(`${CONNECTIONS} concurrent dashboard clients for ${DURATION} s`, rows, {
    ...rows[0],
    rssSamplesMb: rss.map(Math.round),
  });
  if (result.errors || result.non2xx || result.timeouts) process.exitCode = 1;
} finally {
  await proxy.stop();
  await prom.stop();
  await chain.close();
}
