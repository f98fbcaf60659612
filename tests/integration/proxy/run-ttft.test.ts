/**
 * GET /api/runs/:runId/ttft against the real parts: the simulated chain (its /metrics: vLLM's histograms and the
 * gateway's GenAI client metric), a real Prometheus scraping the chain (its HTTP SD) and the running load-test workers
 * (the proxy's HTTP SD, the demo's scrape job), the real proxy on PGlite, and the real `hopscope-load` (`main()`,
 * `--metrics prometheus`). The answer's client figures are the run's own (count and mean as the client recorded them),
 * the server's are vLLM's, the percentiles are what Prometheus' own histogram_quantile says over the same buckets, and
 * the parts of the gap add up to the client's mean.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RunRecord, RunTtftAnswer } from '../../../contract';
import { bucketQuantile } from '../../../backend-proxy/src/services/run-ttft';
import { skipWithoutPrometheus as skip, startRunMetricsStack, type RunMetricsStack } from './run-metrics-stack';

let stack: RunMetricsStack | undefined;
let proxy: RunMetricsStack['proxy'];
let chain: RunMetricsStack['chain'];
let promUrl: string;
/** The proxy's scrape interval, and Prometheus'. */
const SCRAPE_MS = 1000;

before(async () => {
  if (skip) return;
  stack = await startRunMetricsStack({
    tmpPrefix: 'run-ttft-',
    timeScale: 0.1,
    scrapeChain: true,
    proxy: (s) => ({
      prometheusUrl: s.promUrl,
      chainControlUrl: s.chain.controlUrl,
      dataDir: join(s.dir, 'data'),
      scrapeIntervalMs: SCRAPE_MS,
    }),
  });
  ({ proxy, chain, promUrl } = stack);
});
after(async () => {
  await stack?.stop();
});

async function promQuery(q: string, atMs: number): Promise<number | null> {
  const body = (await (
    await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}&time=${atMs / 1000}`)
  ).json()) as { data: { result: Array<{ value: [number, string] }> } };
  const v = body.data.result[0]?.value[1];
  return v === undefined || v === 'NaN' ? null : Number(v);
}

test(
  "client vs server TTFT of a run: the client's own figures, vLLM's, and the gap part by part",
  { skip, timeout: 120_000 },
  async (t) => {
    // The chain's hops must be scraped before the run, so vLLM's increase() over the window starts from a sample.
    for (const t0 = Date.now(); Date.now() - t0 < 20_000;) {
      if (((await promQuery('count(up{job="chain"} == 1)', Date.now())) ?? 0) >= 4) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const run = stack!.load('ttft-1', [
      '--scenario',
      'single-turn-short',
      '--target',
      chain.gatewayUrl,
      '--control',
      chain.controlUrl,
      '--backend',
      'vllm',
      '--rps',
      '8',
      '--duration',
      '10s',
    ]);
    const code = await run.code;
    assert.equal(code, 0, run.err());
    const summary = run.summary();
    const record = RunRecord.parse(await (await fetch(`${proxy.url}/api/runs/ttft-1`)).json());
    // The service reads vLLM's totals at the run's end and the client's 3 scrapes later (the worker's last scrape comes
    // after its end): ask it only once both instants have passed and every vLLM series has a sample after the end, so
    // the answer and Prometheus below are evaluated over the same samples at the same instants.
    const clientAt = record.endMs! + 3 * SCRAPE_MS;
    for (const t0 = Date.now(); ;) {
      const oldest = await promQuery('min(timestamp(vllm:time_to_first_token_seconds_count))', Date.now());
      if (Date.now() > clientAt && oldest !== null && oldest * 1000 > record.endMs!) break;
      assert.ok(
        Date.now() - t0 < 20_000,
        `vLLM's samples after the run's end (${record.endMs}) not scraped: the oldest last one is at ${oldest}`
      );
      await new Promise((r) => setTimeout(r, 200));
    }

    const res = await fetch(`${proxy.url}/api/runs/ttft-1/ttft`);
    assert.equal(res.status, 200);
    const a = RunTtftAnswer.parse(await res.json());
    t.diagnostic(
      JSON.stringify({
        layers: a.layers.map((l) => [l.layer, l.figures?.count, l.figures?.meanMs, l.figures?.p99Ms]),
        parts: a.gap.parts.map((p) => [p.part, p.meanMs]),
      })
    );
    assert.deepEqual(
      a.sources.map((s) => s.ok),
      [true]
    );
    assert.equal(a.from, record.startMs);
    assert.equal(a.to, record.endMs);
    const layer = (l: string) => a.layers.find((x) => x.layer === l)?.figures;
    const client = layer('client')!;
    const server = layer('server')!;
    const caller = layer('caller')!;
    assert.ok(client && server && caller, JSON.stringify(a.missing));

    // The client's side is the run's own: every request with a first token, and the mean it recorded.
    assert.equal(client.count, record.summary!.ttftMs.count);
    assert.ok(
      Math.abs(client.meanMs! - record.summary!.ttftMs.mean!) < 0.5,
      `client mean ${client.meanMs} vs recorded ${record.summary!.ttftMs.mean}`
    );
    assert.equal(summary.ttftMs.count, client.count);
    // Every client request made one vLLM call (chat and RAG routes, backend vllm); increase() extrapolates a little.
    assert.ok(
      server.count! > client.count! * 0.8 && server.count! < client.count! * 1.3,
      `vLLM counted ${server.count} for ${client.count}`
    );
    assert.ok(server.meanMs! > 0 && server.meanMs! < client.meanMs!, "vLLM's clock starts later than the client's");
    assert.ok(caller.meanMs! > server.meanMs! && caller.meanMs! < client.meanMs!, "the caller's clock lies between");

    // The percentiles are Prometheus' own histogram_quantile over the same buckets.
    for (const [f, q] of [
      [client, 0.99],
      [server, 0.5],
    ] as const) {
      const prom = await promQuery(
        `histogram_quantile(${q}, ${f.query})`,
        f.metric.startsWith('hopscope_load') ? clientAt : a.to
      );
      const mine = q === 0.99 ? f.p99Ms : f.p50Ms;
      assert.ok(
        prom !== null && Math.abs(prom * 1000 - mine!) < 0.01,
        `${f.metric} P${q * 100}: ${mine} ms vs Prometheus ${prom}`
      );
    }
    assert.ok(
      Math.abs(
        bucketQuantile(0.5, [
          [0.1, 0],
          [0.2, 10],
          [Infinity, 10],
        ])! - 0.15
      ) < 1e-12
    );
    assert.equal(
      bucketQuantile(0.99, [
        [0.1, 5],
        [Infinity, 10],
      ]),
      0.1,
      'in +Inf: the highest finite bound'
    );
    // increase() can leave a bucket above the next (each series is extrapolated on its own): Prometheus makes the buckets
    // monotonic before it interpolates, and so must we. Checked against Prometheus itself on such a vector.
    const bucket = (le: string, n: number) => `label_replace(vector(${n}), "le", "${le}", "", "")`;
    for (const q of [0.5, 0.9]) {
      const theirs = await promQuery(
        `histogram_quantile(${q}, ${bucket('0.1', 10)} or ${bucket('0.2', 12)} or ${bucket('+Inf', 11)})`,
        Date.now()
      );
      const ours = bucketQuantile(q, [
        [0.1, 10],
        [0.2, 12],
        [Infinity, 11],
      ]);
      assert.ok(
        theirs !== null && Math.abs(ours! - theirs) < 1e-12,
        `non-monotonic buckets, q ${q}: ${ours} vs Prometheus ${theirs}`
      );
    }

    // The gap, part by part: two remainders between clocks, then what vLLM's metrics time; they add up to the client's mean.
    assert.deepEqual(
      a.gap.parts.map((p) => [p.part, p.measured, p.side]),
      [
        ['before_caller', false, 'gap'],
        ['caller_to_server', false, 'gap'],
        ['server_queue', true, 'server'],
        ['server_prefill', true, 'server'],
        ['server_other', false, 'server'],
      ]
    );
    const sum = a.gap.parts.reduce((n, p) => n + p.meanMs!, 0);
    assert.ok(Math.abs(sum - client.meanMs!) < 0.01, `parts add up to ${sum}, client mean ${client.meanMs}`);
    assert.ok(Math.abs(a.gap.meanMs! - (client.meanMs! - server.meanMs!)) < 0.01);
    assert.ok(a.gap.parts[0].meanMs! > 0, 'the hops before the LLM take time');
    // Over time: P50 and P99 of both sides on the window's grid.
    assert.deepEqual(
      a.series.map((s) => `${s.layer}:${s.stat}`),
      ['client:p50', 'client:p99', 'server:p50', 'server:p99']
    );
    assert.ok(a.series.every((s) => s.points.some(([, v]) => v !== null)));
    assert.ok(a.notes.some((n) => /every request it served/.test(n)));
    // vLLM's queue and prefill buckets start at 0.3 s: a percentile inside the first bucket is only a bound, and says so.
    assert.ok(
      a.notes.some((n) => /vllm:request_queue_time_seconds: P99 .* first bucket/.test(n)),
      a.notes.join('\n')
    );

    assert.equal((await fetch(`${proxy.url}/api/runs/nope-1/ttft`)).status, 404);
  }
);
