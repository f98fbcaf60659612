/**
 * The floor for any proxy in its own process (bench/proxy-golden.bench.ts): a bare node:http server that issues the
 * same range queries to Prometheus in parallel with undici and answers their series as JSON: no routing, validation,
 * tracing, metrics or error handling. What it adds over querying Prometheus directly is the cost of the extra hop.
 * Started by the bench: `node --import tsx bench/golden-floor.ts` with HOPSCOPE_PROMETHEUS_URL and PLANS (JSON
 * {backend: [query…]}); prints `listening on <url>`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

const prom = process.env.HOPSCOPE_PROMETHEUS_URL!;
const plans = JSON.parse(process.env.PLANS ?? '{}') as Record<string, string[]>;
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });

const server = createServer(async (req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  const from = Number(u.searchParams.get('from'));
  const to = Number(u.searchParams.get('to'));
  const step = String(Number(u.searchParams.get('stepMs') ?? 5000) / 1000);
  const out = await Promise.all(
    (plans[u.searchParams.get('backend') ?? ''] ?? []).map(async (query) => {
      const r = await request(
        `${prom}/api/v1/query_range?${new URLSearchParams({ query, start: String(from / 1000), end: String(to / 1000), step })}`,
        { dispatcher: agent }
      );
      const j = (await r.body.json()) as {
        data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
      };
      return j.data.result.map((s) => ({ labels: s.metric, points: s.values.map(([t, v]) => [t * 1000, Number(v)]) }));
    })
  );
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ series: out.flat() }));
});
server.listen(0, '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`)
);
process.on('SIGTERM', () => process.exit(0));
