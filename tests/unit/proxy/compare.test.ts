import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompareAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { parseSelector } from '../../../backend-proxy/src/routes/compare';
import { hex, otlp, type SpanSpec } from '../../support/otlp-spans';

let proxy: RunningProxy;
const T0 = Date.now() - 100_000;

before(async () => {
  proxy = await startProxy({ port: 0, prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined });
  const spans: SpanSpec[] = [];
  // vLLM: steady 100 ms; TGI: 200 ms, except bucket 5 (t0+50..60 s) where one in ten takes 2 s (a jitter hot zone).
  for (let i = 0; i < 300; i++) {
    const t = T0 + i * 333;
    spans.push({
      traceId: hex(i + 1, 32),
      spanId: hex(i + 1, 16),
      name: 'chat',
      service: 'llm-vllm',
      startMs: t,
      durMs: 100 + (i % 5),
      attrs: { model: 'llama-3-8b', 'hopscope.ttft_ms': 30 },
    });
    const hot = t >= T0 + 50_000 && t < T0 + 60_000 && i % 10 === 0;
    spans.push({
      traceId: hex(10_000 + i, 32),
      spanId: hex(10_000 + i, 16),
      name: 'chat',
      service: 'llm-tgi',
      startMs: t,
      durMs: hot ? 2000 : 200 + (i % 5),
      attrs: { model: 'llama-3-8b' },
    });
  }
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
});
after(() => proxy.close());

test('A/B: distributions on shared edges, P50/P99, TTFT, hot zones aligned on one grid', async () => {
  const r = await fetch(
    `${proxy.url}/api/compare?a=backend:vllm,model:llama-3-8b&b=backend=tgi&from=${T0}&to=${T0 + 100_000}&buckets=10`
  );
  assert.equal(r.status, 200);
  const c = CompareAnswer.parse(await r.json());
  assert.equal(c.a.count, 300);
  assert.equal(c.b.count, 300);
  assert.ok(Math.abs(c.a.p50Ms! - 102) <= 2);
  assert.ok(c.b.p99Ms! > 2 * c.a.p99Ms!);
  assert.equal(c.a.ttftP50Ms, 30);
  assert.equal(c.b.ttftP50Ms, null);
  assert.equal(c.times.length, 10);
  assert.equal(c.a.p99Series.length, 10);
  assert.equal(c.a.histogram.length, c.bucketEdgesMs.length + 1);
  assert.equal(c.a.hotZones.length, 0);
  assert.deepEqual(
    c.b.hotZones.map((z) => z.startMs),
    [T0 + 50_000]
  );
});

test('selectors are validated', async () => {
  assert.deepEqual(parseSelector('backend:tgi,model:m-1', 'a'), { backend: 'tgi', model: 'm-1' });
  for (const q of [
    'a=backend:triton&b=backend:vllm',
    'b=backend:vllm',
    'a=model:"x"&b=backend:vllm',
    'a=color:red&b=backend:vllm',
  ]) {
    assert.equal((await fetch(`${proxy.url}/api/compare?${q}`)).status, 400, q);
  }
});

test("only the inference servers' own spans count: not the callers' client spans nor agent runs; sampled spans say what they stand for", async () => {
  const T2 = T0 - 60_000;
  const spans: SpanSpec[] = [];
  for (let i = 0; i < 20; i++) {
    const t = hex(50_000 + i, 32);
    const at = T2 + i * 1000;
    const root = hex(50_000 + i * 4, 16);
    // gateway (root, head-sampled at 0.5 for even i) → its client span → the vLLM server span; every 4th is an agent run.
    const agent = i % 4 === 0;
    spans.push({
      traceId: t,
      spanId: root,
      name: 'POST /v1/chat/completions',
      service: 'gateway',
      startMs: at,
      durMs: 300,
      attrs: { 'gen_ai.request.model': 'llama-3-8b', ...(i % 2 === 0 ? { 'hopscope.sampler.rate': 0.5 } : {}) },
    });
    if (agent)
      spans.push({
        traceId: t,
        spanId: hex(50_001 + i * 4, 16),
        parentSpanId: root,
        name: 'invoke_agent research',
        service: 'agent',
        startMs: at + 5,
        durMs: 280,
        attrs: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': 'vllm',
          'gen_ai.request.model': 'llama-3-8b',
        },
      });
    spans.push({
      traceId: t,
      spanId: hex(50_002 + i * 4, 16),
      parentSpanId: root,
      name: 'chat llama-3-8b',
      service: 'gateway',
      kind: 3,
      startMs: at + 10,
      durMs: 250,
      attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'vllm', 'gen_ai.request.model': 'llama-3-8b' },
    });
    spans.push({
      traceId: t,
      spanId: hex(50_003 + i * 4, 16),
      parentSpanId: hex(50_002 + i * 4, 16),
      name: 'chat llama-3-8b',
      service: 'llm-vllm',
      startMs: at + 12,
      durMs: 240,
      attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'vllm', 'gen_ai.request.model': 'llama-3-8b' },
    });
  }
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
  const c = CompareAnswer.parse(
    await (
      await fetch(`${proxy.url}/api/compare?a=backend:vllm&b=model:llama-3-8b&from=${T2 - 1000}&to=${T2 + 21_000}`)
    ).json()
  );
  for (const side of [c.a, c.b]) {
    assert.equal(side.count, 20, "one span per request: the vLLM server's own");
    assert.equal(side.p50Ms, 240);
    assert.equal(side.estimatedRequests, 30, '10 spans of traces kept at 0.5 stand for 20');
    assert.deepEqual([side.origin, side.exact], ['sampled-traces', false]);
    assert.match(side.note!, /inference servers' own server spans .* 10 of 20 were head-sampled/);
  }
  const svc = CompareAnswer.parse(
    await (
      await fetch(`${proxy.url}/api/compare?a=service:gateway&b=service:agent&from=${T2 - 1000}&to=${T2 + 21_000}`)
    ).json()
  );
  assert.equal(svc.a.count, 20, "a service selector: that service's server spans");
  assert.equal(svc.b.count, 5);
});
