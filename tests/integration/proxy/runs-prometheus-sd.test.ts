/**
 * Client metrics of a running load test reach a real Prometheus through the proxy's HTTP service discovery: the real
 * `hopscope-load` (`main()`, `--metrics prometheus`) registers its scrape target with the run, the proxy serves
 * running workers at GET /api/runs/targets, and a real Prometheus (/usr/bin/prometheus) with the demo's own scrape job
 * (scripts/demo-parts/prometheus.ts `runsScrapeJob`) has `hopscope_load_requests_total{run_id=…}` within 10 s of the
 * run's registration. A finished worker leaves the targets.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { skipWithoutPrometheus as skip, startRunMetricsStack, type RunMetricsStack } from './run-metrics-stack';

let stack: RunMetricsStack | undefined;
let proxy: RunMetricsStack['proxy'];
let chain: RunMetricsStack['chain'];
let promUrl: string;

before(async () => {
  if (skip) return;
  stack = await startRunMetricsStack({ tmpPrefix: 'runs-sd-', timeScale: 0.05, scrapeChain: false });
  ({ proxy, chain, promUrl } = stack);
});
after(async () => {
  await stack?.stop();
});

async function query(q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const body = (await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as {
    status: string;
    data: { result: never[] };
  };
  assert.equal(body.status, 'success');
  return body.data.result;
}

test(
  'a running worker is a scrape target: Prometheus has its hopscope_load_requests_total{run_id} within 10 s',
  { skip },
  async (t) => {
    const run = stack!.load('sd-1', ['--target', chain.gatewayUrl, '--rps', '5', '--duration', '14s']);
    let registeredAt = 0;
    for (const t0 = Date.now(); Date.now() - t0 < 10_000 && !registeredAt;) {
      if ((await fetch(`${proxy.url}/api/runs/sd-1`)).status === 200) registeredAt = Date.now();
      else await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(registeredAt, `the run registered: ${run.err()}`);
    const groups = (await (await fetch(`${proxy.url}/api/runs/targets`)).json()) as Array<{
      targets: string[];
      labels: Record<string, string>;
    }>;
    const mine = groups.filter((g) => g.labels.run_id === 'sd-1');
    assert.equal(mine.length, 1, JSON.stringify(groups));
    assert.match(mine[0].targets[0], /^127\.0\.0\.1:\d+$/);
    let series: Awaited<ReturnType<typeof query>> = [];
    while (Date.now() - registeredAt < 10_000) {
      series = await query('hopscope_load_requests_total{run_id="sd-1"}');
      if (series.length) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const tookMs = Date.now() - registeredAt;
    assert.ok(
      series.length > 0,
      `no hopscope_load_requests_total{run_id="sd-1"} within ${tookMs} ms of the registration`
    );
    t.diagnostic(`first hopscope_load_requests_total sample ${tookMs} ms after the registration`);
    const m = series[0].metric;
    assert.equal(m.job, 'hopscope-load');
    assert.equal(m.scenario, 'ad-hoc');
    assert.equal(m.worker_id, mine[0].labels.worker_id);
    assert.equal(m.run_id, 'sd-1', "the proxy's target label");
    assert.equal(m.exported_run_id, undefined, "the series' own copy is dropped by relabelling (honor_labels: false)");
    const code = await run.code;
    assert.equal(code, 0, run.err());
    const summary = run.summary();
    // The last scrape before the end saw every finished request.
    const total = await query('sum(hopscope_load_requests_total{run_id="sd-1"})');
    assert.equal(Number(total[0].value[1]), summary.completed);
    const after = (await (await fetch(`${proxy.url}/api/runs/targets`)).json()) as Array<{
      labels: Record<string, string>;
    }>;
    assert.ok(!after.some((g) => g.labels.run_id === 'sd-1'), 'a finished worker is no longer a target');
  }
);
