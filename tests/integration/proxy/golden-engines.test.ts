/**
 * Golden metrics on real engines' names, through a real Prometheus scraping the chain: a vLLM exposing only an older
 * release's names (HOPSCOPE_VLLM_METRIC_NAMES=legacy: vllm:gpu_prefix_cache_*_total, vllm:gpu_cache_usage_perc,
 * vllm:time_per_output_token_seconds) still answers, each series naming the names it was read from; and
 * GET /api/golden?backend=sglang answers the SGLang hop's series from its sglang:* metrics.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { chat, startPrometheus, waitFor } from '../loadgen/support';
import { freePort } from '../../support/real-servers';

let proxy: RunningProxy;
let chain: RunningChain;
let prom: Awaited<ReturnType<typeof startPrometheus>>;
let from = 0;

const SYSTEM = 'You are the Hopscope test assistant. Answer in one short paragraph.';
const ask = (backend: string, i: number) =>
  chat(
    chain.gatewayUrl,
    {
      max_tokens: 12,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: `question ${i}: what is a KV cache?` },
      ],
    },
    { 'x-hopscope-backend': backend, 'x-hopscope-route': 'direct' }
  );

before(async () => {
  const port = await freePort();
  chain = await startChain({
    gatewayPort: 0,
    controlPort: 0,
    timeScale: 0.05,
    logLevel: 'silent',
    tracing: false,
    cudaStandIn: false,
    vllmMetricNames: 'legacy',
  });
  prom = await startPrometheus(`${chain.controlUrl}/targets`);
  proxy = await startProxy({ port, exporterUrls: [], prometheusUrl: prom.url, sourceTimeoutMs: 5000 });
  from = Date.now();
});
after(async () => {
  await chain?.stop();
  await prom?.stop();
  await proxy?.close();
});

const golden = async (backend: string): Promise<GoldenAnswer> => {
  const to = Date.now();
  const res = await fetch(`${proxy.url}/api/golden?backend=${backend}&from=${from - 60_000}&to=${to}&step=5000`);
  assert.equal(res.status, 200);
  return GoldenAnswer.parse(await res.json());
};

/** Sends traffic until the figure has a non-null point (Prometheus needs two scrapes of a counter for a rate). */
async function until(backend: string, ...metrics: string[]): Promise<GoldenAnswer> {
  let i = 0;
  return waitFor(
    `${backend} ${metrics.join(', ')}`,
    async () => {
      for (let k = 0; k < 3; k++) assert.equal((await ask(backend, i++)).status, 200);
      const g = await golden(backend);
      const ok = metrics.every((metric) =>
        g.series.some((x) => x.metric === metric && x.points.some(([, v]) => v !== null))
      );
      return ok ? g : undefined;
    },
    60_000
  );
}

test('a vLLM exposing only the old names: the golden metrics answer, saying the old names they found', async () => {
  const g = await until('vllm', 'kv_cache_hit_rate', 'rps');
  const hit = g.series.find((s) => s.metric === 'kv_cache_hit_rate' && s.backend === 'vllm')!;
  assert.deepEqual(hit.metricNames, ['vllm:gpu_prefix_cache_hits_total', 'vllm:gpu_prefix_cache_queries_total']);
  assert.match(hit.query!, /vllm:gpu_prefix_cache_hits_total/);
  assert.ok(hit.points.some(([, v]) => v !== null && v >= 0 && v <= 1));
  // Prometheus really holds only the old names.
  const names = (await (await fetch(`${prom.url}/api/v1/label/__name__/values`)).json()).data as string[];
  for (const old of ['vllm:gpu_cache_usage_perc', 'vllm:time_per_output_token_seconds_bucket'])
    assert.ok(names.includes(old), `${old} in ${names.filter((n) => n.startsWith('vllm:')).join(' ')}`);
  for (const current of [
    'vllm:prefix_cache_hits_total',
    'vllm:kv_cache_usage_perc',
    'vllm:inter_token_latency_seconds_bucket',
  ])
    assert.ok(!names.includes(current), `${current} is not exposed`);
  // The names no release renamed are read as they are, and say so.
  const rps = g.series.find((s) => s.metric === 'rps' && s.backend === 'vllm');
  assert.deepEqual(rps?.metricNames, ['vllm:request_success_total']);
  assert.ok(!g.missing.some((m) => m.backend === 'vllm' && m.metric === 'kv_cache_hit_rate'));
});

test('GET /api/golden?backend=sglang answers the SGLang hop from its sglang:* metrics', async () => {
  const g = await until('sglang', 'rps', 'output_tokens_per_s', 'e2e_p99_s', 'ttft_p99_s');
  assert.ok(g.series.length > 0 && g.series.every((s) => s.backend === 'sglang'), 'only SGLang series');
  for (const metric of ['rps', 'output_tokens_per_s', 'e2e_p99_s', 'ttft_p99_s'] as const) {
    const s = g.series.find((x) => x.metric === metric);
    assert.ok(s, `${metric} answered`);
    assert.ok(
      s.metricNames?.every((n) => n.startsWith('sglang:')),
      `${metric} from ${s.metricNames}`
    );
    assert.equal(s.labels.model_name, 'hopscope-llama-8b-v1');
  }
  const rps = g.series.find((x) => x.metric === 'rps')!;
  assert.ok(
    rps.points.some(([, v]) => v !== null && v > 0),
    'requests counted'
  );
  assert.ok(!g.missing.some((m) => m.backend !== 'sglang'), 'nothing of the other engines is asked');
});
