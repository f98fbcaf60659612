/**
 * /api/golden and /api/gpu/heatmap against a real Prometheus scraping a prom-client server with the real vLLM, TGI and
 * DCGM names; then Prometheus is stopped and every endpoint must still answer within its deadline with a per-source error.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenAnswer, HeatmapAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startPrometheus, type RealServer } from '../../support/real-servers';
import { startChainMetrics } from './chain-metrics';
import { hex, otlp } from '../../support/otlp-spans';

let prom: RealServer;
let chain: Awaited<ReturnType<typeof startChainMetrics>>;
let proxy: RunningProxy;

async function waitFor(fn: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

before(async () => {
  chain = await startChainMetrics();
  prom = await startPrometheus([chain.target]);
  proxy = await startProxy({
    port: 0,
    prometheusUrl: prom.url,
    exporterUrls: [],
    chainControlUrl: undefined,
    sourceTimeoutMs: 2000,
  });
  // TGI TTFT comes from spans: post some with a time-to-first-token attribute.
  const now = Date.now();
  const spans = Array.from({ length: 20 }, (_, i) => ({
    traceId: hex(5000 + i, 32),
    spanId: hex(5000 + i, 16),
    name: 'chat tgi',
    service: 'llm-tgi',
    startMs: now - 20_000 + i * 500,
    durMs: 800,
    attrs: { 'hopscope.ttft_ms': i === 19 ? 400 : 100 },
  }));
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
  // Enough scrapes for rate() over two samples.
  await waitFor(
    async () => {
      const r = await (
        await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent('count_over_time(tgi_request_success[1m])')}`)
      ).json();
      return Number(r.data?.result?.[0]?.value?.[1] ?? 0) >= 4;
    },
    30_000,
    'four scrapes'
  );
});
after(async () => {
  await proxy?.close();
  await prom?.stop();
  await chain?.close();
});

const pick = (g: GoldenAnswer, metric: string, backend: string) =>
  g.series.filter((s) => s.metric === metric && s.backend === backend);
const last = (pts: Array<[number, number | null]>): number | null =>
  [...pts].reverse().find(([, v]) => v !== null)?.[1] ?? null;

test('golden: vLLM and TGI mapped onto their real metric names', async () => {
  const r = await fetch(`${proxy.url}/api/golden?from=now-60s&to=now&step=2s`);
  assert.equal(r.status, 200);
  const g = GoldenAnswer.parse(await r.json());
  assert.deepEqual(
    g.sources.map((s) => [s.source, s.ok]),
    [
      ['prometheus', true],
      ['embedded-store', true],
    ]
  );
  const vRps = pick(g, 'rps', 'vllm');
  assert.equal(vRps.length, 1);
  assert.equal(vRps[0].labels.model_name, 'llama-3-8b');
  assert.ok(last(vRps[0].points)! > 1, `vllm rps ${last(vRps[0].points)}`);
  const kv = last(pick(g, 'kv_cache_hit_rate', 'vllm')[0].points)!;
  assert.ok(Math.abs(kv - 0.6) < 0.05, `kv ${kv}`);
  const vErr = last(pick(g, 'error_rate', 'vllm')[0].points)!;
  assert.ok(Math.abs(vErr - 0.2) < 0.05, `vllm error ${vErr}`);
  const tErr = last(pick(g, 'error_rate', 'tgi')[0].points)!;
  assert.ok(Math.abs(tErr - 0.25) < 0.05, `tgi error ${tErr}`);
  const vTtft = last(pick(g, 'ttft_p99_s', 'vllm')[0].points)!;
  assert.ok(vTtft > 0.06 && vTtft <= 0.08, `vllm ttft ${vTtft}`);
  assert.ok(pick(g, 'e2e_p99_s', 'tgi')[0].query!.includes('tgi_request_duration_bucket'));
  assert.ok(last(pick(g, 'output_tokens_per_s', 'tgi')[0].points)! > 0);
  // TGI TTFT: from spans, and labelled so.
  const tTtft = pick(g, 'ttft_p99_s', 'tgi');
  assert.equal(tTtft.length, 1);
  assert.equal(tTtft[0].origin, 'otel');
  assert.match(tTtft[0].note!, /OTel/);
  assert.ok(g.missing.some((m) => m.metric === 'kv_cache_hit_rate' && m.backend === 'tgi'));
});

test('golden: backend and model filters; label values cannot inject PromQL', async () => {
  const g = GoldenAnswer.parse(
    await (await fetch(`${proxy.url}/api/golden?from=now-60s&to=now&backend=vllm&model=llama-3-8b`)).json()
  );
  assert.ok(g.series.length > 0 && g.series.every((s) => s.backend === 'vllm'));
  assert.ok(g.series[0].query!.includes('model_name="llama-3-8b"'));
  const none = GoldenAnswer.parse(
    await (await fetch(`${proxy.url}/api/golden?from=now-60s&to=now&backend=vllm&model=other`)).json()
  );
  assert.equal(none.series.length, 0);
  const bad = await fetch(`${proxy.url}/api/golden?model=${encodeURIComponent('x"}) or up{job=~".+')}`);
  assert.equal(bad.status, 400);
  assert.equal((await fetch(`${proxy.url}/api/golden?backend=triton`)).status, 400);
});

test('heatmap: SM_ACTIVE absent → GR_ENGINE_ACTIVE, both hostname spellings, blank sentinel = no data', async () => {
  const h = HeatmapAnswer.parse(await (await fetch(`${proxy.url}/api/gpu/heatmap?from=now-30s&to=now&step=2s`)).json());
  assert.equal(h.field, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE');
  assert.match(h.note!, /DCGM_FI_PROF_SM_ACTIVE/);
  assert.equal(h.rows.length, 3);
  const byGpu = Object.fromEntries(h.rows.map((r) => [r.gpu, r]));
  assert.equal(byGpu['0'].host, 'node-a'); // Hostname
  assert.equal(byGpu['1'].host, 'node-b'); // hostname
  assert.equal(byGpu['0'].pod, 'llm-vllm-0');
  assert.ok(byGpu['0'].values.includes(0.75));
  assert.ok(
    byGpu['2'].values.every((v) => v === null),
    'blank sentinel must be no data'
  );
  assert.equal(h.times.length, byGpu['0'].values.length);
});

test('Prometheus stopped: golden and heatmap answer within the deadline with a per-source error', async () => {
  await prom.stop();
  for (const path of ['/api/golden?from=now-60s&to=now', '/api/gpu/heatmap?from=now-60s&to=now', '/api/health']) {
    const t0 = Date.now();
    const r = await fetch(`${proxy.url}${path}`);
    const ms = Date.now() - t0;
    assert.equal(r.status, 200, path);
    const b = await r.json();
    const p = b.sources.find((s: { source: string }) => s.source === 'prometheus');
    assert.equal(p.ok, false, path);
    assert.match(p.error, /prometheus: unreachable/, path);
    assert.ok(ms < 2000 + 1500, `${path} took ${ms} ms`); // deadline 2 s plus slack for a loaded machine
  }
  // Span-derived series still arrive.
  const g = GoldenAnswer.parse(await (await fetch(`${proxy.url}/api/golden?from=now-60s&to=now`)).json());
  assert.equal(pick(g, 'ttft_p99_s', 'tgi').length, 1);
});
