/**
 * Root cause over a time range (GET /api/rca?from&to[&service][&maxTraces]) from the embedded store: the range's
 * traces (failed first, then the slowest, then a spread), its baseline from before it, and what it sampled; the live
 * engine settings from configuration (an SLO from the config makes the root breach it); gzip request bodies for
 * POST /api/rca and POST /v1/traces, and a zip bomb that is a 413 without inflating into memory.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { RcaRangeAnswer, RcaRangeSample } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, otlp, type SpanSpec } from '../../support/otlp-spans';

const now = Date.now();
const T0 = now - 300_000;
const T1 = now - 120_000;
const LIMIT = 1024 * 1024;
let proxy: RunningProxy;

const post = (path: string, body: Buffer | string, encoding?: string): Promise<Response> =>
  fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
const getJson = async (path: string): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${proxy.url}${path}`);
  return { status: r.status, body: await r.json() };
};

/** Healthy traffic before the incident (ids 0..59), then the incident: 30 traces with a slow LLM (ids 100..), one failed. */
function traffic(): SpanSpec[] {
  const spans: SpanSpec[] = [];
  for (let i = 0; i < 60; i++) spans.push(...chainTrace(i, T0 + i * 2000, 100 + (i % 7)));
  for (let i = 0; i < 30; i++) spans.push(...chainTrace(100 + i, T1 + i * 1000, 900 + (i % 5) * 10, i === 7 ? 2 : 1));
  return spans;
}

before(async () => {
  proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    bodyLimitBytes: LIMIT,
    // As HOPSCOPE_RCA_CONFIG would give it: the gateway's SLO.
    rcaConfig: { sloMs: { gateway: 200 } },
  });
  // The traces arrive gzip-encoded, as an OTLP exporter with compression sends them.
  const r = await post('/v1/traces', gzipSync(JSON.stringify(otlp(traffic()))), 'gzip');
  assert.equal(r.status, 200, await r.text());
});
after(async () => {
  await proxy?.close();
});

test('a range root cause from the store: the slow hop first, every trace of the range read, the baseline from before it', async () => {
  const { status, body } = await getJson(`/api/rca?from=${T1 - 500}&to=${T1 + 31_000}`);
  assert.equal(status, 200, JSON.stringify(body));
  RcaRangeAnswer.parse(body);
  const sample = RcaRangeSample.parse(body.sample);
  assert.deepEqual(
    { found: sample.found, analysed: sample.analysed, failed: sample.failed, sampled: sample.sampled },
    { found: 30, analysed: 30, failed: 1, sampled: false }
  );
  assert.equal(body.candidates[0].service, 'llm-vllm', JSON.stringify(body.candidates.slice(0, 3)));
  assert.equal(body.window.traces, 30);
  assert.ok(
    !body.missing.some((m: string) => /^baseline: none given/.test(m)),
    `a baseline from before the range: ${body.missing.join('; ')}`
  );
  assert.ok(
    body.sources.every((s: { ok: boolean }) => s.ok),
    JSON.stringify(body.sources)
  );
});

test('bounded: maxTraces keeps the failed trace and says it sampled', async () => {
  const { body } = await getJson(`/api/rca?from=${T1 - 500}&to=${T1 + 31_000}&maxTraces=6`);
  const sample = RcaRangeSample.parse(body.sample);
  assert.deepEqual(
    { found: sample.found, analysed: sample.analysed, failed: sample.failed, sampled: sample.sampled },
    { found: 30, analysed: 6, failed: 1, sampled: true }
  );
  assert.match(sample.how, /6 of the 30 trace/);
  assert.equal(body.candidates[0].service, 'llm-vllm');
});

test('a service filter, an empty range and bad parameters', async () => {
  const only = await getJson(`/api/rca?from=${T1 - 500}&to=${T1 + 31_000}&service=rag`);
  assert.equal(only.body.sample.found, 30, 'every trace passes through rag');
  const none = await getJson(`/api/rca?from=${T1 - 500}&to=${T1 + 31_000}&service=nobody`);
  assert.equal(none.status, 200);
  assert.equal(none.body.sample.analysed, 0);
  assert.match(none.body.missing[0], /no trace through nobody/);
  assert.equal((await getJson(`/api/rca?from=${T1}&to=${T1 - 1}`)).status, 400);
  assert.equal((await getJson(`/api/rca?from=${T1}&to=${T1 + 1000}&maxTraces=0`)).status, 400);
  assert.equal((await getJson(`/api/rca?from=${T1}&to=${T1 + 1000}&service=a%20b`)).status, 400);
});

test('the configured SLO applies to live root cause: the gateway root breaches 200 ms', async () => {
  const { body } = await getJson(`/api/traces/${'0'.repeat(29)}06f/rca`);
  assert.equal(body.traceId, '0000000000000000000000000000006f');
  assert.match(body.anchor.reason, /breached its SLO \(200/, body.anchor.reason);
  // A healthy trace under the SLO: not a breach.
  const healthy = await getJson(`/api/traces/${'0'.repeat(31)}1/rca`);
  assert.doesNotMatch(healthy.body.anchor.reason, /SLO/);
});

test('POST /api/rca takes a gzip body, answers as for the plain one, and its own config on top of the configured one', async () => {
  const spans = traffic().filter((s) => parseInt(s.traceId, 16) > 100);
  const body = JSON.stringify({ traces: otlp(spans) });
  const plain = await (await post('/api/rca', body)).json();
  const zipped = await post('/api/rca', gzipSync(body), 'gzip');
  assert.equal(zipped.status, 200);
  const z = await zipped.json();
  assert.deepEqual(
    z.candidates.map((c: { service: string; score: number }) => [c.service, c.score]),
    plain.candidates.map((c: { service: string; score: number }) => [c.service, c.score])
  );
  const bad = await post('/api/rca', JSON.stringify({ traces: otlp(spans), config: { sloMs: { gateway: -1 } } }));
  assert.equal(bad.status, 400);
});

test('a zip bomb is a 413 naming the limit, decoded only up to it', async () => {
  const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024, 0x20));
  assert.ok(bomb.length < LIMIT / 2, 'the encoded body is well under the limit');
  const rss0 = process.memoryUsage().rss;
  for (const path of ['/api/rca', '/v1/traces']) {
    const r = await post(path, bomb, 'gzip');
    assert.equal(r.status, 413, path);
    const e = await r.json();
    assert.equal(e.error.code, 'payload_too_large');
    assert.match(e.error.message, new RegExp(`${LIMIT} bytes, after decoding`));
  }
  const grown = process.memoryUsage().rss - rss0;
  assert.ok(grown < 64 * 1024 * 1024, `rss grew ${Math.round(grown / 1e6)} MB (the bomb inflates to 268 MB)`);
  const zstd = await post('/api/rca', 'x', 'zstd');
  assert.equal(zstd.status, 415);
});
