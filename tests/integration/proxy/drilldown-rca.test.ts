/**
 * services → pods → kernel events, fault annotations and root cause, with two bpf-exporters (one healthy, one that
 * hangs) and a chain control server; every endpoint must answer within its deadline with a per-source error.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AnnotationsAnswer,
  PodKernelEventsAnswer,
  PodsAnswer,
  RcaAnswer,
  ServicesAnswer,
  type KernelEvent,
} from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, hex, otlp, tinyServer } from '../../support/otlp-spans';

const DEADLINE = 800;
const now = Date.now();
const T0 = now - 120_000;
const SLOW = 40; // index of the slow trace
let proxy: RunningProxy;
let exporter: Awaited<ReturnType<typeof tinyServer>>;
let hanging: Awaited<ReturnType<typeof tinyServer>>;
let chain: Awaited<ReturnType<typeof tinyServer>>;
const exporterQueries: string[] = [];

const slowStart = T0 + SLOW * 1000;
const events: KernelEvent[] = [
  ...[0, 1, 2].map((i) => ({
    ts: slowStart + 25 + i * 100,
    type: 'tls_handshake' as const,
    pid: 42,
    comm: 'llm',
    pod: 'llm-vllm-0',
    namespace: 'chain',
    node: 'node-a',
    durationMs: 600,
    detail: { sni: 'llm' },
    mode: 'live' as const,
  })),
  {
    ts: slowStart + 30,
    type: 'tcp_retransmit',
    pid: 7,
    comm: 'rag',
    pod: 'rag-0',
    node: 'node-a',
    detail: {},
    mode: 'live',
  },
];

before(async () => {
  exporter = await tinyServer((req, res) => {
    exporterQueries.push(req.url!);
    const u = new URL(req.url!, 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (u.pathname === '/health') return void res.end(JSON.stringify({ ok: true, probes: [] }));
    const from = Number(u.searchParams.get('from'));
    const to = Number(u.searchParams.get('to'));
    res.end(
      JSON.stringify({
        events: [...events.filter((e) => e.ts >= from && e.ts <= to), { ts: 1, type: 'not-a-type' }],
        dropped: 2,
      })
    );
  });
  hanging = await tinyServer(() => {
    /* never answers */
  });
  chain = await tinyServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify([
        {
          id: 'f1',
          target: 'llm-vllm',
          kind: 'tls_slow_handshake',
          startMs: slowStart - 1000,
          endMs: slowStart + 5000,
          active: false,
        },
        {
          id: 'f0',
          target: 'rag',
          kind: 'latency',
          startMs: now - 10 * 86_400_000,
          endMs: now - 9 * 86_400_000,
          active: false,
        },
      ])
    );
  });
  proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [exporter.url, hanging.url],
    chainControlUrl: chain.url,
    sourceTimeoutMs: DEADLINE,
  });
  const spans = [];
  for (let i = 0; i < 60; i++)
    spans.push(...chainTrace(i, T0 + i * 1000, i === SLOW ? 1500 : 100 + (i % 7), i === SLOW ? 2 : 1));
  const r = await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
  assert.equal(r.status, 200);
});
after(async () => {
  await proxy?.close();
  await exporter?.close();
  await hanging?.close();
  await chain?.close();
});

async function timedJson(path: string, init?: RequestInit): Promise<{ status: number; body: any; ms: number }> {
  const t0 = Date.now();
  const r = await fetch(`${proxy.url}${path}`, init);
  const body = await r.json();
  return { status: r.status, body, ms: Date.now() - t0 };
}
const range = `from=${T0 - 1000}&to=${now}`;
const assertHangingReported = (sources: Array<{ source: string; ok: boolean; error?: string }>): void => {
  const h = sources.find((s) => s.source.includes(new URL(hanging.url).host))!;
  assert.equal(h.ok, false);
  assert.match(h.error!, /no answer within 800 ms/);
  assert.ok(sources.find((s) => s.source.includes(new URL(exporter.url).host))!.ok);
};

test('services from spans', async () => {
  const { body } = await timedJson(`/api/services?${range}`);
  const s = ServicesAnswer.parse(body);
  assert.deepEqual(
    s.services.map((x) => x.service),
    ['gateway', 'llm-vllm', 'rag']
  );
  const llm = s.services.find((x) => x.service === 'llm-vllm')!;
  assert.equal(llm.spans, 60);
  assert.equal(llm.errors, 1);
  assert.deepEqual(llm.pods, ['llm-vllm-0']);
  assert.ok(llm.p99Ms! > llm.p50Ms!);
  // No Prometheus here: every figure from the embedded store's counters, exact (nothing carried a sampling rate).
  assert.equal(llm.requests, 60);
  assert.equal(llm.rps, Math.round((60 / ((now - T0 + 1000) / 1000)) * 1000) / 1000);
  assert.equal(llm.errorRate, Math.round((1 / 60) * 10_000) / 10_000);
  assert.deepEqual(
    [llm.figures.rate.origin, llm.figures.rate.exact, llm.figures.errors.exact, llm.figures.latency.exact],
    ['ingest-counters', true, true, false]
  );
  assert.ok(
    s.notes.some((n) => /no Prometheus configured/.test(n)),
    s.notes.join('; ')
  );
});

test('pods of a service carry kernel event counts; a hanging exporter is a per-source error within the deadline', async () => {
  const { body, ms } = await timedJson(`/api/services/llm-vllm/pods?${range}`);
  const p = PodsAnswer.parse(body);
  assert.equal(p.pods.length, 1);
  assert.equal(p.pods[0].pod, 'llm-vllm-0');
  assert.deepEqual(p.pods[0].kernelEvents, { tls_handshake: 3 });
  assertHangingReported(p.sources);
  assert.ok(ms < DEADLINE * 2 + 1500, `took ${ms} ms`);
});

test('kernel events of a pod, filtered by type, invalid events dropped', async () => {
  const { body } = await timedJson(`/api/pods/llm-vllm-0/kernel-events?${range}&type=tls_handshake`);
  const k = PodKernelEventsAnswer.parse(body);
  assert.equal(k.events.length, 3);
  assert.deepEqual(k.counts, { tls_handshake: 3 });
  assert.equal(k.dropped, 2);
  assertHangingReported(k.sources);
  assert.ok(exporterQueries.some((q) => q.includes('pod=llm-vllm-0') && q.includes('type=tls_handshake')));
  assert.equal((await timedJson(`/api/pods/${encodeURIComponent('x{y}')}/kernel-events`)).status, 400);
  assert.equal((await timedJson('/api/pods/a/kernel-events?type=bogus')).status, 400);
});

test('fault annotations from the chain, limited to the range', async () => {
  const a = AnnotationsAnswer.parse((await timedJson(`/api/annotations?${range}`)).body);
  assert.deepEqual(
    a.annotations.map((x) => x.id),
    ['f1']
  );
  assert.ok(a.sources[0].ok);
});

test('per-trace root cause: the slow LLM hop ranks first, with kernel evidence and a baseline from the store', async () => {
  const { status, body, ms } = await timedJson(`/api/traces/${hex(SLOW + 1, 32)}/rca`);
  assert.equal(status, 200);
  const a = RcaAnswer.parse(body);
  assert.equal(a.traceId, hex(SLOW + 1, 32));
  assert.equal(a.candidates[0].service, 'llm-vllm');
  assert.equal(a.candidates[0].pod, 'llm-vllm-0');
  assert.ok(a.candidates[0].baselineMs! < 200, `baseline ${a.candidates[0].baselineMs}`);
  assert.ok(
    a.candidates[0].evidence.some((e) => e.kind.startsWith('kernel:tls')),
    JSON.stringify(a.candidates[0].evidence.map((e) => e.kind))
  );
  assert.ok(a.tookMs < 500);
  assertHangingReported(body.sources);
  assert.ok(a.missing.some((m) => m.includes('kernel events')));
  assert.ok(ms < DEADLINE * 2 + 1500);
  assert.equal((await timedJson(`/api/traces/${'e'.repeat(32)}/rca`)).status, 404);
});

test('window root cause from OTLP JSON given as data', async () => {
  const incident = [];
  const baseline = [];
  for (let i = 0; i < 20; i++) incident.push(...chainTrace(100 + i, T0 + i * 1000, 1200, 1));
  for (let i = 0; i < 20; i++) baseline.push(...chainTrace(200 + i, T0 + i * 1000, 100, 1));
  const { status, body } = await timedJson('/api/rca', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ traces: otlp(incident), baseline: otlp(baseline), kernelEvents: events }),
  });
  assert.equal(status, 200, JSON.stringify(body));
  const a = RcaAnswer.parse(body);
  assert.equal(a.candidates[0].service, 'llm-vllm');
  const bad = await timedJson('/api/rca', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ traces: { resourceSpans: [{ scopeSpans: [{ spans: [{}] }] }] } }),
  });
  assert.equal(bad.status, 400);
  const noTraces = await timedJson('/api/rca', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(noTraces.status, 400);
});

test('health lists every source, the hanging exporter as not ok', async () => {
  const { body, ms } = await timedJson('/api/health');
  assert.equal(body.ok, false);
  assert.deepEqual(
    body.sources.map((s: { source: string }) => s.source.split(' ')[0]),
    ['embedded-store', 'bpf-exporter', 'bpf-exporter', 'chain-control', 'database']
  );
  assert.ok(ms < 2000 + 1500);
});
