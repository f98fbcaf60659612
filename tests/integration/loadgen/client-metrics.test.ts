/**
 * Client-side truth in Prometheus, live: two workers of one run (the second joining) serve their client metrics as
 * scrape targets, registered with the run; a real Prometheus finds them through the proxy's HTTP service discovery
 * (here the contract server), sees them within seconds, and after the run `sum by (run_id)` adds both workers up to
 * exactly what they sent — the names are asserted exactly. Then the OTLP path: the same metrics over OTLP/HTTP with
 * the OTEL_* variables honoured.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../loadgen/src/cli';
import { startContractProxy, type ContractProxy } from './contract-proxy';
import { startScriptedLlm, type ScriptedLlm } from './scripted-llm';
import { havePrometheus, startPrometheus, waitFor } from './support';

const NAMES = [
  'hopscope_load_achieved_requests_per_second',
  ...['e2e_request_latency', 'inter_token_latency', 'time_per_output_token', 'time_to_first_token'].flatMap((h) =>
    ['bucket', 'count', 'sum'].map((x) => `hopscope_load_${h}_seconds_${x}`)
  ),
  'hopscope_load_in_flight_requests',
  'hopscope_load_output_tokens_total',
  'hopscope_load_requests_sent_total',
  'hopscope_load_requests_total',
  'hopscope_load_target_requests_per_second',
].sort();

describe('client metrics', () => {
  let llm: ScriptedLlm;
  let proxy: ContractProxy;
  let dir: string;

  before(async () => {
    llm = await startScriptedLlm({ ttftMs: 20, gapMs: 5, tokens: 4 });
    proxy = await startContractProxy();
    dir = mkdtempSync(join(tmpdir(), 'lg-cm-'));
    writeFileSync(
      join(dir, 'cm-scenario.yaml'),
      'description: client metrics test\nload: { rps: 5, duration: 7s, arrivals: uniform }\nrequest: { maxTokens: 4 }\n'
    );
  });
  after(async () => {
    await llm.close();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const worker = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    let out = '',
      err = '';
    const done = main(
      [
        '--scenario',
        join(dir, 'cm-scenario.yaml'),
        '--target',
        llm.url,
        '--backend',
        'none',
        '--quiet',
        '--spool-dir',
        dir,
        ...args,
      ],
      (s) => {
        out += s;
      },
      (s) => {
        err += s;
      },
      { env, signal: new AbortController().signal }
    );
    return done.then((code) => ({ code, out, err }));
  };

  it('two workers of one run: live in Prometheus within seconds, summed exactly after the run, with the exact names', async (t) => {
    if (!havePrometheus()) return t.skip('no /usr/bin/prometheus (Debian package prometheus)');
    const prom = await startPrometheus(`${proxy.url}/api/runs/targets`);
    try {
      const t0 = Date.now();
      const common = ['--report', proxy.url, '--run-id', 'cm-1', '--metrics', 'prometheus', '--metrics-wait', '8s'];
      const a = worker([...common, '--worker-id', 'w-a']);
      await waitFor('worker a registered', async () => proxy.runs.get('cm-1')?.registrations.length === 1, 5000, 50);
      const b = worker([...common, '--join', '--worker-id', 'w-b']);
      // Live: both workers' target rates, and finished requests, while the run goes on.
      const total = (q: string) => prom.query(q).then((r) => (r.length ? Number(r[0].value[1]) : 0));
      await waitFor(
        'both workers scraped',
        async () => (await total('count(hopscope_load_target_requests_per_second{run_id="cm-1"})')) === 2,
        10_000,
        200
      );
      await waitFor(
        'requests counted live',
        async () => (await total('sum by (run_id) (hopscope_load_requests_total{run_id="cm-1"})')) > 0,
        10_000,
        200
      );
      const liveS = (Date.now() - t0) / 1000;
      assert.ok(liveS < 7, `seen in Prometheus ${liveS.toFixed(1)} s after the start, while the 7 s run went on`);
      assert.equal(
        await total('sum by (run_id) (hopscope_load_target_requests_per_second{run_id="cm-1"})'),
        10,
        'target rates add up: 5 + 5'
      );

      const [ra, rb] = await Promise.all([a, b]);
      assert.equal(ra.code, 0, ra.err);
      assert.equal(rb.code, 0, rb.err);
      const sa = JSON.parse(ra.out),
        sb = JSON.parse(rb.out);
      assert.doesNotMatch(`${ra.err}${rb.err}`, /no scrape of/, 'the final counts were scraped');
      const sent = sa.sent + sb.sent;
      assert.equal(sent, 70);
      // After the run: every request of both workers, by outcome, summed by run id.
      assert.equal(
        await total('sum by (run_id) (hopscope_load_requests_total{run_id="cm-1"})'),
        sa.completed + sb.completed
      );
      assert.equal(
        await total(
          'sum by (run_id) (hopscope_load_requests_total{run_id="cm-1",outcome="ok",scenario="cm-scenario"})'
        ),
        sa.succeeded + sb.succeeded
      );
      assert.equal(await total('sum by (run_id) (hopscope_load_requests_sent_total{run_id="cm-1"})'), sent);
      assert.equal(
        await total('sum by (run_id) (hopscope_load_output_tokens_total{run_id="cm-1"})'),
        sa.outputTokens + sb.outputTokens
      );
      // Histograms: every TTFT in +Inf, none under 10 ms (the server waits 20 ms before the first token).
      assert.equal(
        await total('sum by (run_id) (hopscope_load_time_to_first_token_seconds_bucket{run_id="cm-1",le="+Inf"})'),
        sa.ttftMs.count + sb.ttftMs.count
      );
      assert.equal(
        await total('sum by (run_id) (hopscope_load_time_to_first_token_seconds_bucket{run_id="cm-1",le="0.01"})'),
        0
      );
      assert.equal(
        await total('sum by (run_id) (hopscope_load_inter_token_latency_seconds_count{run_id="cm-1"})'),
        sa.itlMs.count + sb.itlMs.count
      );
      assert.equal(
        await total('sum by (run_id) (hopscope_load_e2e_request_latency_seconds_count{run_id="cm-1"})'),
        sa.latencyMs.count + sb.latencyMs.count
      );
      const names = ((await prom.api('/api/v1/label/__name__/values')) as string[])
        .filter((n) => n.startsWith('hopscope_load_'))
        .sort();
      assert.deepEqual(names, NAMES);
      // The registrations carried the scrape targets; finished workers leave the service discovery.
      const regs = proxy.runs.get('cm-1')!.registrations;
      assert.ok(regs.every((r) => r.metricsUrl && /^http:\/\/127\.0\.0\.1:\d+\/metrics$/.test(r.metricsUrl)));
      const sd = (await (await fetch(`${proxy.url}/api/runs/targets`)).json()) as unknown[];
      assert.deepEqual(sd, []);
    } finally {
      await prom.stop();
    }
  });

  it('OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: headers, resource attributes, service name, live and final', async () => {
    const posts: Array<{ path: string; headers: http.IncomingHttpHeaders; body: any; atMs: number }> = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        posts.push({
          path: req.url ?? '',
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
          atMs: Date.now(),
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const vars = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=team-a',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci',
      OTEL_SERVICE_NAME: 'lg-ci',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
    };
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    try {
      const t0 = Date.now();
      const r = await worker(
        ['--report', 'none', '--run-id', 'cm-otlp', '--duration', '3s', '--worker-id', 'w-otlp'],
        process.env
      );
      assert.equal(r.code, 0, r.err);
      const sum = JSON.parse(r.out);
      assert.ok(posts.length >= 2, `${posts.length} exports`);
      assert.ok(posts[0].atMs - t0 < 3000, 'the first export came during the run');
      assert.ok(posts.every((p) => p.path === '/v1/metrics' && p.headers['x-tenant'] === 'team-a'));
      const last = posts.at(-1)!.body.resourceMetrics[0];
      const res = Object.fromEntries(
        last.resource.attributes.map((a: { key: string; value: { stringValue?: string } }) => [
          a.key,
          a.value.stringValue,
        ])
      );
      assert.equal(res['service.name'], 'lg-ci');
      assert.equal(res['service.instance.id'], 'w-otlp');
      assert.equal(res['deployment.environment.name'], 'ci');
      const metrics = last.scopeMetrics.flatMap((s: { metrics: unknown[] }) => s.metrics) as Array<{
        name: string;
        sum?: {
          dataPoints: Array<{
            asInt?: number;
            asDouble?: number;
            attributes: Array<{ key: string; value: { stringValue: string } }>;
          }>;
        };
      }>;
      const requests = metrics.find((m) => m.name === 'hopscope_load_requests')!;
      const total = requests.sum!.dataPoints.reduce((n, p) => n + Number(p.asInt ?? p.asDouble), 0);
      assert.equal(total, sum.completed, 'the final export has every request');
      const attrs = Object.fromEntries(requests.sum!.dataPoints[0].attributes.map((a) => [a.key, a.value.stringValue]));
      assert.equal(attrs.run_id, 'cm-otlp');
      assert.equal(attrs.scenario, 'cm-scenario');
      for (const n of [
        'hopscope_load_time_to_first_token_seconds',
        'hopscope_load_e2e_request_latency_seconds',
        'hopscope_load_in_flight_requests',
        'hopscope_load_target_requests_per_second',
      ]) {
        assert.ok(
          metrics.some((m) => m.name === n),
          n
        );
      }
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await new Promise<void>((r) => {
        receiver.close(() => r());
        receiver.closeAllConnections();
      });
    }
  });
});
