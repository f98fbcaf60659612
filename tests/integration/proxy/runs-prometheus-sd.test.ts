/**
 * Client metrics of a running load test reach a real Prometheus through the proxy's HTTP service discovery: the real
 * `hopscope-load` (`main()`, `--metrics prometheus`) registers its scrape target with the run, the proxy serves
 * running workers at GET /api/runs/targets, and a real Prometheus (/usr/bin/prometheus) with the demo's own scrape job
 * (scripts/demo-parts/prometheus.ts `runsScrapeJob`) has `hopscope_load_requests_total{run_id=…}` within 10 s of the
 * run's registration. A finished worker leaves the targets.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { main } from '../../../loadgen/src/cli';
import { runsScrapeJob } from '../../../scripts/demo-parts/prometheus';
import { freePort } from './real-servers';

const PROMETHEUS = '/usr/bin/prometheus';
const skip = existsSync(PROMETHEUS) ? undefined : `${PROMETHEUS} is missing (apt-get install prometheus)`;
let proxy: RunningProxy;
let chain: RunningChain;
let prom: ChildProcess | undefined;
let promUrl: string;
let dir: string;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'runs-sd-'));
  const port = await freePort();
  chain = await startChain({
    gatewayPort: 0,
    controlPort: 0,
    timeScale: 0.05,
    logLevel: 'silent',
    otlpEndpoint: `http://127.0.0.1:${port}/v1/traces`,
    samplerAdaptive: false,
  });
  proxy = await startProxy({
    port,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 0,
  });
  const promPort = await freePort();
  promUrl = `http://127.0.0.1:${promPort}`;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n${runsScrapeJob(proxy.url, { refresh: '1s' })}`
  );
  prom = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  );
  let stderr = '';
  prom.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const t0 = Date.now();
  for (;;) {
    try {
      if ((await fetch(`${promUrl}/-/ready`)).ok) break;
    } catch {
      /* starting */
    }
    if (prom.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`prometheus did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});
after(async () => {
  if (prom && prom.exitCode === null) {
    prom.kill('SIGTERM');
    await new Promise((r) => {
      prom!.once('exit', r);
      setTimeout(r, 5000);
    });
  }
  await chain?.stop();
  await proxy?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
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
    let err = '';
    const out = join(dir, 'sd-1.json');
    const run = main(
      [
        '--target',
        chain.gatewayUrl,
        '--rps',
        '5',
        '--duration',
        '14s',
        '--run-id',
        'sd-1',
        '--report',
        proxy.url,
        '--metrics',
        'prometheus',
        '--quiet',
        '--spool-dir',
        join(dir, 'spool'),
        '--json',
        out,
      ],
      () => {},
      (s) => {
        err += s;
      },
      { env: {} }
    );
    let registeredAt = 0;
    for (const t0 = Date.now(); Date.now() - t0 < 10_000 && !registeredAt;) {
      if ((await fetch(`${proxy.url}/api/runs/sd-1`)).status === 200) registeredAt = Date.now();
      else await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(registeredAt, `the run registered: ${err}`);
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
    assert.equal(m.exported_run_id, undefined, "honor_labels keeps the series' own run_id");
    const code = await run;
    assert.equal(code, 0, err);
    const summary = JSON.parse(readFileSync(out, 'utf8'));
    // The last scrape before the end saw every finished request.
    const total = await query('sum(hopscope_load_requests_total{run_id="sd-1"})');
    assert.equal(Number(total[0].value[1]), summary.completed);
    const after = (await (await fetch(`${proxy.url}/api/runs/targets`)).json()) as Array<{
      labels: Record<string, string>;
    }>;
    assert.ok(!after.some((g) => g.labels.run_id === 'sd-1'), 'a finished worker is no longer a target');
  }
);
