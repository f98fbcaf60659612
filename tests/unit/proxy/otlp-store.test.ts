import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { TraceDetail, TraceList } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { encodeOtlpProtobuf } from '../../support/otlp-encode';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { enrichSpan } from '../../../backend-proxy/src/store/enrich';
import { otlpToSpans } from '../../../backend-proxy/src/otlp/normalize';
import { chainTrace, hex, otlp } from '../../support/otlp-spans';

let proxy: RunningProxy;
const T0 = Date.now() - 60_000;
before(async () => {
  proxy = await startProxy({ port: 0, prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined });
});
after(() => proxy.close());

const post = (body: BodyInit, type: string, extra: Record<string, string> = {}): Promise<Response> =>
  fetch(`${proxy.url}/v1/traces`, { method: 'POST', headers: { 'content-type': type, ...extra }, body });
const getJson = async (path: string): Promise<any> => (await fetch(`${proxy.url}${path}`)).json();

test('OTLP JSON and protobuf (and gzip) are received and searchable', async () => {
  const a = await post(JSON.stringify(otlp(chainTrace(0, T0, 100))), 'application/json');
  assert.equal(a.status, 200);
  const b = await post(
    Buffer.from(encodeOtlpProtobuf(otlp(chainTrace(1, T0 + 1000, 2000, 2)))),
    'application/x-protobuf'
  );
  assert.equal(b.status, 200);
  const c = await post(gzipSync(JSON.stringify(otlp(chainTrace(2, T0 + 2000, 300)))), 'application/json', {
    'content-encoding': 'gzip',
  });
  assert.equal(c.status, 200);
  const list = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}`));
  assert.equal(list.traces.length, 3);
  const slow = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}&minDurationMs=1000`));
  assert.deepEqual(
    slow.traces.map((t) => t.traceId),
    [hex(2, 32)]
  );
  assert.equal(slow.traces[0].status, 'error');
  assert.equal(slow.traces[0].rootService, 'gateway');
  assert.equal(slow.traces[0].durationMs, 2030);
  const err = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}&status=error`));
  assert.equal(err.traces.length, 1);
  const bySvc = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}&service=rag`));
  assert.equal(bySvc.traces.length, 3);
  const none = TraceList.parse(await getJson(`/api/traces?from=${T0 + 100_000}&to=${T0 + 200_000}`));
  assert.equal(none.traces.length, 0);
});

test('trace by id returns normalised, enriched spans (leading zeros optional)', async () => {
  const d = TraceDetail.parse(await getJson(`/api/traces/${(1).toString(16)}`));
  assert.equal(d.spans.length, 3);
  const llm = d.spans.find((s) => s.service === 'llm-vllm')!;
  assert.equal(llm.attributes['gen_ai.request.model'], 'llama-3-8b');
  assert.equal(llm.attributes['gen_ai.usage.input_tokens'], 700);
  assert.equal(llm.attributes['gen_ai.provider.name'], 'vllm');
  assert.equal(llm.resource['k8s.pod.name'], 'llm-vllm-0');
  const missing = await fetch(`${proxy.url}/api/traces/${'f'.repeat(32)}`);
  assert.equal(missing.status, 404);
  assert.equal((await fetch(`${proxy.url}/api/traces/not-hex`)).status, 400);
});

test('a malformed body is a 400 and every earlier trace is kept', async () => {
  const before = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}`)).traces.length;
  const bodies: Array<[BodyInit, string]> = [
    ['{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}', 'application/json'],
    ['{nope', 'application/json'],
    // A valid first trace followed by a broken span: nothing of it may be stored (all or nothing).
    [
      JSON.stringify({
        resourceSpans: [...otlp(chainTrace(9, T0, 5)).resourceSpans, { scopeSpans: [{ spans: [{ spanId: 1 }] }] }],
      }),
      'application/json',
    ],
    [Buffer.from([0xff, 0xff, 0xff, 0x07]), 'application/x-protobuf'],
  ];
  for (const [body, type] of bodies) {
    const r = await post(body, type);
    assert.equal(r.status, 400, String(body).slice(0, 40));
    assert.equal((await r.json()).error.code, 'bad_otlp');
  }
  assert.equal((await post('x', 'text/plain')).status, 415);
  const after_ = TraceList.parse(await getJson(`/api/traces?from=${T0 - 1000}&to=${T0 + 10_000}`)).traces.length;
  assert.equal(after_, before);
});

test('enrichment never overwrites what instrumentation set', () => {
  const [s] = otlpToSpans(
    otlp([
      {
        traceId: hex(1, 32),
        spanId: hex(1, 16),
        name: 'x',
        service: 'llm-tgi',
        startMs: 1,
        durMs: 1,
        attrs: { model: 'other', 'gen_ai.request.model': 'set-by-app', prompt_length: 12, batch_size: 4 },
      },
    ])
  );
  enrichSpan(s);
  assert.equal(s.attributes['gen_ai.request.model'], 'set-by-app');
  assert.equal(s.attributes['gen_ai.usage.input_tokens'], 12);
  assert.equal(s.attributes['hopscope.batch_size'], 4);
  assert.equal(s.attributes['gen_ai.provider.name'], 'tgi');
  assert.doesNotMatch(String(s.attributes['hopscope.enriched']), /gen_ai\.request\.model/);
});

test('the store is bounded by span count and age, oldest first, evictions counted', () => {
  let now = 1_000_000;
  const store = new TraceStore({ maxSpans: 30, maxBytes: 1e9, maxAgeMs: 10_000 }, () => now);
  for (let i = 0; i < 20; i++) store.add(otlpToSpans(otlp(chainTrace(i, i, 10))));
  assert.ok(store.size.spans <= 30);
  assert.equal(store.evicted.capacity, 60 - store.size.spans);
  assert.equal(store.get(hex(1, 32)), undefined); // oldest gone
  assert.ok(store.get(hex(20, 32))); // newest kept
  now += 20_000;
  store.add(otlpToSpans(otlp(chainTrace(100, 0, 10))));
  assert.equal(store.size.traces, 1);
  assert.ok(store.evicted.age > 0);
  const small = new TraceStore({ maxSpans: 1e6, maxBytes: 2000, maxAgeMs: 1e9 }, () => now);
  for (let i = 0; i < 50; i++) small.add(otlpToSpans(otlp(chainTrace(i, i, 10))));
  assert.ok(small.size.bytes <= 2000, `bytes ${small.size.bytes}`);
});

test('eviction counters are exported as metrics', async () => {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  assert.match(text, /hopscope_proxy_otlp_received_spans_total\{encoding="protobuf"\} 3/);
  assert.match(text, /hopscope_proxy_store_spans /);
});

test('sort=duration lists the slowest traces of the whole range, not the slowest of the most recent', async () => {
  const base = T0 + 500_000;
  // Twenty traces; the two slowest are the oldest, so a newest-first page of 5 would miss them.
  const durs = [5000, 4000, ...Array.from({ length: 18 }, (_, i) => 100 + i)];
  for (let i = 0; i < durs.length; i++) {
    assert.equal(
      (await post(JSON.stringify(otlp(chainTrace(700 + i, base + i * 1000, durs[i]))), 'application/json')).status,
      200
    );
  }
  const range = `from=${base - 1000}&to=${base + 60_000}`;
  const recent = TraceList.parse(await getJson(`/api/traces?${range}&limit=5`));
  // chainTrace(i) has trace id hex(i + 1).
  assert.ok(
    !recent.traces.some((t) => t.traceId === hex(701, 32)),
    'newest first: the old slow ones are not on the page'
  );
  const slowest = TraceList.parse(await getJson(`/api/traces?${range}&limit=5&sort=duration`));
  assert.deepEqual(
    slowest.traces.slice(0, 2).map((t) => t.traceId),
    [hex(701, 32), hex(702, 32)]
  );
  assert.equal(slowest.traces.length, 5);
  for (let i = 1; i < slowest.traces.length; i++)
    assert.ok(slowest.traces[i - 1].durationMs >= slowest.traces[i].durationMs);
  const bad = await fetch(`${proxy.url}/api/traces?${range}&sort=slowest`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error.message, /sort: "slowest" is not one of recent\|duration/);
});
