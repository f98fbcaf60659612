import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KernelEvent, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace } from '../../../backend-proxy/src/rca';
import { rng } from '../../support/rca/synthetic';
import { TRACE, sp } from './helpers';

/** gw(server) → gw client → a(server, own work `aSelf`) and gw client → b(server); jitter from the seed. */
function chain(
  seed: number,
  o: { aSelf?: number; aGap?: number; bGap?: number; aAttrs?: Span['attributes']; aStatus?: Span['status'] } = {}
): Span[] {
  const r = rng(seed);
  const j = (x: number): number => x * (0.95 + 0.1 * r());
  const aGap = o.aGap ?? j(1);
  const aSelf = o.aSelf ?? j(10);
  const bGap = o.bGap ?? j(1);
  const t1 = 2;
  const aEnd = t1 + aGap + aSelf;
  const t2 = aEnd + 1;
  const bEnd = t2 + bGap + j(20);
  const end = bEnd + 2;
  return [
    sp('1', undefined, 'gw', 'POST /', 'server', 0, end),
    sp('2', '1', 'gw', 'call a', 'client', t1, aEnd, { attributes: { 'peer.service': 'a' } }),
    sp('3', '2', 'a', 'work', 'server', t1 + aGap / 2, aEnd - aGap / 2, {
      attributes: o.aAttrs ?? {},
      status: o.aStatus ?? 'unset',
    }),
    sp('4', '1', 'gw', 'call b', 'client', t2, bEnd, { attributes: { 'peer.service': 'b' } }),
    sp('5', '4', 'b', 'work', 'server', t2 + bGap / 2, bEnd - bGap / 2),
  ];
}
const healthy = buildBaseline(Array.from({ length: 40 }, (_, i) => chain(i + 1)));
const strip = (a: RcaAnswer): RcaAnswer => ({ ...a, tookMs: 0 });

test('self time above the robust baseline ranks its hop first, with the numbers in the evidence', () => {
  const a = rankTrace({ spans: chain(99, { aSelf: 60 }), baseline: healthy });
  RcaAnswer.parse(a);
  const top = a.candidates[0];
  assert.equal(top.service, 'a');
  assert.equal(top.pod, 'a-0');
  assert.equal(top.operation, 'work');
  const ev = top.evidence.find((e) => e.kind === 'self_time')!;
  assert.ok(ev && Math.abs((ev.excessMs as number) - 50) < 2, JSON.stringify(ev));
  assert.match(ev.summary, /usually/);
  assert.ok(top.baselineMs! > 9 && top.baselineMs! < 12);
  assert.ok(a.tookMs >= 0);
  // Within the healthy spread: no self-time evidence anywhere.
  const calm = rankTrace({ spans: chain(98, { aSelf: 10.2 }), baseline: healthy });
  assert.ok(
    calm.candidates.every((c) => c.evidence.every((e) => e.kind !== 'self_time')),
    JSON.stringify(calm.candidates)
  );
});

test('critical path lists the spans the request waited on, chronologically, with self and gap', () => {
  const a = rankTrace({ spans: chain(5), baseline: healthy });
  const path = a.criticalPath as Array<{ operation: string; service: string; gapMs?: number; onPathMs: number }>;
  assert.deepEqual(
    path.map((p) => `${p.service}:${p.operation}`),
    ['gw:POST /', 'gw:call a', 'a:work', 'gw:call b', 'b:work']
  );
  assert.ok(path[1].gapMs! > 0.9 && path[1].gapMs! < 1.1);
});

test("a grown client→server gap is the callee's network side; gaps to several callees blame the caller", () => {
  const one = rankTrace({ spans: chain(7, { aGap: 40 }), baseline: healthy });
  assert.equal(one.candidates[0].service, 'a');
  assert.equal(one.candidates[0].evidence[0].kind, 'client_server_gap');
  const both = rankTrace({ spans: chain(7, { aGap: 40, bGap: 35 }), baseline: healthy });
  assert.equal(both.candidates[0].service, 'gw');
  assert.ok(both.candidates[0].evidence.some((e) => e.kind === 'client_side_delay'));
});

test('kernel events join by pod inside the span window, and by trace id anywhere', () => {
  const spans = chain(11, { aGap: 30 });
  const a3 = spans[2];
  const ev = (o: Partial<KernelEvent>): KernelEvent => ({
    ts: a3.startMs,
    type: 'tcp_retransmit',
    pid: 7,
    comm: 'a',
    pod: 'a-0',
    detail: {},
    mode: 'replay',
    ...o,
  });
  const events: KernelEvent[] = [
    ev({ ts: a3.startMs - 1 }), // inside the client window (network side)
    ev({ ts: a3.startMs + 5000 }), // long after: not joined
    ev({ pod: 'b-0', ts: a3.startMs }), // other pod: not joined to a
    ev({ type: 'tls_handshake', durationMs: 900, ts: a3.startMs + 5000, traceId: TRACE }), // by trace id
    ev({ type: 'tls_handshake', durationMs: 3, ts: a3.startMs }), // routine: no evidence
  ];
  const a = rankTrace({ spans, baseline: healthy, kernelEvents: events });
  const top = a.candidates[0];
  assert.equal(top.service, 'a');
  const retrans = top.evidence.find((e) => e.kind === 'kernel:tcp_retransmit')!;
  assert.equal(retrans.count, 1);
  const tls = top.evidence.find((e) => e.kind === 'kernel:tls_handshake')!;
  assert.equal(tls.count, 1);
  assert.match(tls.summary, /carried this trace's id/);
  assert.match(tls.summary, /900 ms/);
  // Events on a pod whose spans are calm add little: kernel evidence needs corroboration.
  const b = a.candidates.find((c) => c.service === 'b');
  assert.ok(!b || b.score < top.score / 5);
  // Without the events, a's score is lower by the kernel share.
  const plain = rankTrace({ spans, baseline: healthy });
  assert.ok(plain.candidates[0].score < top.score);
  assert.ok(plain.missing.some((m) => /kernel events/.test(m)));
});

test('a TCP event on the caller about a segment to a server of the trace is on the link into that server', () => {
  const spans = chain(21);
  Object.assign(spans[2].attributes, { 'server.address': '10.0.0.7', 'server.port': 8443 });
  Object.assign(spans[4].attributes, { 'server.address': '10.0.0.8', 'server.port': 8443 });
  // A retransmitted segment (e.g. the FIN) of gw's call to a, after that call ended: inside gw's own span only.
  const ev = (o: Partial<KernelEvent>): KernelEvent => ({
    ts: spans[3].startMs + 0.5,
    type: 'tcp_retransmit',
    pid: 7,
    comm: 'gw',
    pod: 'gw-0',
    mode: 'live',
    detail: { saddr: '10.0.0.1', sport: 40000, daddr: '::ffff:10.0.0.7', dport: 8443 },
    ...o,
  });
  const a = rankTrace({ spans, baseline: healthy, kernelEvents: [ev({}), ev({ ts: spans[3].startMs + 0.6 })] });
  const at = (svc: string) =>
    a.candidates.find((c) => c.service === svc)?.evidence.find((e) => e.kind === 'kernel:tcp_retransmit')?.count;
  assert.equal(at('a'), 2, JSON.stringify(a.candidates));
  assert.equal(at('gw'), undefined);
  assert.equal(a.candidates[0].service, 'a');
  // A segment to an address no span of the trace served stays where the window put it.
  const other = rankTrace({
    spans,
    baseline: healthy,
    kernelEvents: [ev({ detail: { daddr: '10.0.0.9', dport: 8443 } })],
  });
  assert.equal(
    other.candidates.find((c) => c.service === 'gw')?.evidence.find((e) => e.kind === 'kernel:tcp_retransmit')?.count,
    1
  );
});

test("segments a caller outside the trace resent to the entry span's port rank the entry first, said as a wait only the client saw", () => {
  const spans = chain(22);
  Object.assign(spans[0].attributes, { 'server.address': '127.0.0.1', 'server.port': 3310 });
  // The load driver (no pod, no span) resent its request 210 ms before gw's span began; healthy otherwise.
  const resent = (o: Partial<KernelEvent>): KernelEvent => ({
    ts: spans[0].startMs - 0.2,
    type: 'tcp_retransmit',
    pid: 99,
    comm: 'client',
    mode: 'live',
    detail: { saddr: '127.0.0.1', sport: 51000, daddr: '127.0.0.1', dport: 3310 },
    ...o,
  });
  const a = rankTrace({ spans, baseline: healthy, kernelEvents: [resent({})] });
  assert.equal(a.candidates[0].service, 'gw', JSON.stringify(a.candidates));
  const ev = a.candidates[0].evidence.find((e) => e.kind === 'kernel:tcp_retransmit')!;
  assert.equal(ev.count, 1);
  assert.match(ev.summary, /caller outside the trace/);
  assert.match(ev.summary, /cannot show/);
  // Sent elsewhere, or long before the lookback: not the entry's.
  for (const e of [resent({ detail: { daddr: '127.0.0.1', dport: 3311 } }), resent({ ts: spans[0].startMs - 5000 })]) {
    const b = rankTrace({ spans, baseline: healthy, kernelEvents: [e] });
    assert.equal(
      b.candidates.find((c) => c.service === 'gw')?.evidence.some((x) => x.kind === 'kernel:tcp_retransmit') ?? false,
      false
    );
  }
  // A non-entry server's port is joined through its caller's span instead (the caller is in the trace).
  Object.assign(spans[2].attributes, { 'server.address': '127.0.0.1', 'server.port': 4000 });
  const c = rankTrace({
    spans,
    baseline: healthy,
    kernelEvents: [resent({ ts: spans[2].startMs - 300, detail: { daddr: '127.0.0.1', dport: 4000 } })],
  });
  assert.equal(
    c.candidates.find((x) => x.service === 'a')?.evidence.some((x) => x.kind === 'kernel:tcp_retransmit') ?? false,
    false
  );
});

test('an event with no pod joins by pid (process.pid) inside the window', () => {
  const spans = chain(12, { aSelf: 40 });
  spans[2].resource['process.pid'] = 4242;
  const e: KernelEvent = {
    ts: spans[2].startMs + 1,
    type: 'gpu_alloc_fail',
    pid: 4242,
    comm: 'python',
    detail: {},
    mode: 'live',
  };
  const a = rankTrace({ spans, baseline: healthy, kernelEvents: [e] });
  assert.ok(a.candidates[0].evidence.some((x) => x.kind === 'kernel:gpu_alloc_fail'));
});

test('errors: the deepest failing span is the origin, failures above it only propagate', () => {
  const spans = chain(13, { aStatus: 'error' });
  spans[0].status = 'error';
  spans[1].status = 'error';
  spans[2].statusMessage = 'boom';
  const a = rankTrace({ spans, baseline: healthy });
  assert.equal(a.candidates[0].service, 'a');
  assert.match(a.candidates[0].evidence.find((e) => e.kind === 'error')!.summary, /boom/);
  assert.ok(!a.candidates.some((c) => c.service === 'gw' && c.evidence.some((e) => e.kind === 'error')));
  assert.match((a as { anchor?: { reason: string } }).anchor!.reason, /failed/);
});

test('a timed-out call with no server span blames the peer and says the span is missing', () => {
  const spans = chain(14).filter((s) => s.spanId !== '3'.padStart(16, '0'));
  spans[1].status = 'timeout';
  spans[1].endMs = spans[1].startMs + 500;
  spans[0].status = 'error';
  spans[0].endMs = 600;
  const a = rankTrace({ spans, baseline: healthy });
  assert.equal(a.candidates[0].service, 'a');
  assert.equal(a.candidates[0].pod, 'unknown');
  assert.ok(a.candidates[0].evidence.some((e) => e.kind === 'timeout'));
  assert.ok(
    a.missing.some((m) => /server span for gw's call "call a" to a.*timed out/.test(m)),
    JSON.stringify(a.missing)
  );
  assert.ok(!a.candidates[0].evidence.some((e) => e.kind === 'broken_propagation'));
});

test('broken propagation: orphan spans, a missing root, and a hop the topology expects', () => {
  const spans = chain(15);
  const orphan = sp('9', 'dead', 'c', 'lost', 'server', 3, 4);
  const a = rankTrace({ spans: [...spans, orphan], baseline: healthy });
  assert.ok(
    a.missing.some((m) => m.includes('000000000000dead') && /propagation/.test(m)),
    JSON.stringify(a.missing)
  );
  assert.ok(a.candidates.find((c) => c.service === 'c')!.evidence.some((e) => e.kind === 'broken_propagation'));
  // Partial trace: the root is gone; the engine still ranks and says what is missing.
  const partial = rankTrace({ spans: spans.slice(1), baseline: healthy });
  assert.ok(partial.candidates.length > 0);
  assert.ok(
    partial.missing.some((m) => /root span/.test(m)),
    JSON.stringify(partial.missing)
  );
  // Topology gw → x → a, but gw reached a directly.
  const edged = rankTrace({
    spans,
    baseline: healthy,
    config: {
      expectedEdges: [
        ['gw', 'x'],
        ['x', 'a'],
        ['gw', 'b'],
      ],
    },
  });
  assert.ok(
    edged.missing.some((m) => /from x between gw and a/.test(m)),
    JSON.stringify(edged.missing)
  );
});

test('λ: long embedding inputs weigh 0.8, a KV-cache hit rate under 75% weighs 1.2', () => {
  const emb = rankTrace({
    spans: chain(16, {
      aSelf: 60,
      aAttrs: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.usage.input_tokens': 900 },
    }),
    baseline: healthy,
  });
  const plain = rankTrace({ spans: chain(16, { aSelf: 60 }), baseline: healthy });
  const kv = rankTrace({
    spans: chain(16, {
      aSelf: 60,
      aAttrs: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.usage.input_tokens': 1000,
        'gen_ai.usage.cache_read.input_tokens': 300,
      },
    }),
    baseline: healthy,
  });
  const lat = (a: RcaAnswer): number => a.candidates[0].evidence.find((e) => e.kind === 'self_time')!.lambda as number;
  assert.equal(lat(emb), 0.8);
  assert.equal(lat(plain), 1);
  assert.equal(lat(kv), 1.2);
  assert.ok(emb.candidates[0].score < plain.candidates[0].score && plain.candidates[0].score < kv.candidates[0].score);
  const custom = rankTrace({
    spans: chain(16, {
      aSelf: 60,
      aAttrs: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.usage.input_tokens': 900 },
    }),
    baseline: healthy,
    config: { lambda: { embeddingLongInput: 0.5 } },
  });
  assert.equal(lat(custom), 0.5);
});

test('without a baseline it still ranks by own time on the path, and says so', () => {
  const a = rankTrace({ spans: chain(17, { aSelf: 80 }) });
  assert.equal(a.candidates[0].service, 'a');
  assert.ok(a.missing.some((m) => /baseline/.test(m)));
});

test('deterministic: same input → same answer; span order does not change the ranking', () => {
  const spans = chain(18, { aSelf: 45, aGap: 20 });
  const events: KernelEvent[] = [
    { ts: spans[2].startMs + 2, type: 'tcp_retransmit', pid: 1, comm: 'a', pod: 'a-0', detail: {}, mode: 'replay' },
  ];
  const x = rankTrace({ spans, baseline: healthy, kernelEvents: events });
  const y = rankTrace({ spans: structuredClone(spans), baseline: healthy, kernelEvents: structuredClone(events) });
  assert.deepEqual(strip(x), strip(y));
  const z = rankTrace({ spans: [...spans].reverse(), baseline: healthy, kernelEvents: events });
  assert.deepEqual(z.candidates, x.candidates);
});

test('an empty trace answers with what is missing', () => {
  const a = rankTrace({ spans: [] });
  assert.deepEqual(a.candidates, []);
  assert.ok(a.missing.length > 0);
});

test('the baseline may be given as healthy spans; same answer as a prebuilt baseline', () => {
  // Flat spans are grouped by trace id, so each healthy trace gets its own.
  const healthySpans = Array.from({ length: 40 }, (_, i) =>
    chain(i + 1).map((s) => ({ ...s, traceId: (i + 1).toString(16).padStart(32, '0') }))
  );
  const spans = chain(99, { aSelf: 60 });
  const x = rankTrace({ spans, baseline: healthy });
  const y = rankTrace({ spans, baseline: healthySpans.flat() });
  assert.deepEqual(y.candidates, x.candidates);
  assert.ok(!y.missing.some((m) => /baseline: none/.test(m)));
});

test('config is validated: a bad or unknown field is a clear error', async () => {
  const { RcaConfigError } = await import('../../../backend-proxy/src/rca');
  assert.throws(
    () => rankTrace({ spans: chain(1), config: { zThreshold: -1 } }),
    (e: unknown) => e instanceof RcaConfigError && /zThreshold/.test(e.message)
  );
  assert.throws(() => rankTrace({ spans: chain(1), config: { nope: 1 } as never }), /nope|unrecognized/i);
  assert.throws(
    () => rankTrace({ spans: chain(1), config: { lambda: { kvCacheHitRate: 2 } } }),
    /lambda\.kvCacheHitRate/
  );
  assert.equal(rankTrace({ spans: chain(1), config: { maxCandidates: 1 } }).candidates.length, 1);
});

test('an uninstrumented hop: the call into it has no server span, and the engine says so', async () => {
  const { syntheticTrace, syntheticHealthy } = await import('../../support/rca/synthetic');
  const base = buildBaseline(syntheticHealthy(21, 40));
  const tr = syntheticTrace({ seed: 4, uninstrumented: ['rag'] });
  const a = rankTrace({ spans: tr.spans, baseline: base, kernelEvents: tr.kernelEvents });
  assert.ok(
    a.missing.some((m) => /server span for gateway's call "POST \/retrieve" to rag/.test(m)),
    JSON.stringify(a.missing)
  );
  const rag = a.candidates.find((c) => c.service === 'rag')!;
  assert.ok(rag.evidence.some((e) => e.kind === 'broken_propagation'));
});

test('duplicate spans (exporter retries) are ignored and reported', () => {
  const spans = chain(31, { aSelf: 50 });
  const a = rankTrace({ spans: [...spans, structuredClone(spans[2])], baseline: healthy });
  const b = rankTrace({ spans, baseline: healthy });
  assert.deepEqual(a.candidates, b.candidates);
  assert.ok(a.missing.some((m) => /1 duplicate span/.test(m)));
});

test('an entry server span (no client span above it) joins the slow handshake that preceded its request', () => {
  const spans = chain(41).slice(0); // gw root is an entry span
  const e: KernelEvent = {
    ts: spans[0].startMs - 300,
    durationMs: 600,
    type: 'tls_handshake',
    pid: 9,
    comm: 'gw',
    pod: 'gw-0',
    detail: {},
    mode: 'replay',
  };
  const far: KernelEvent = { ...e, ts: spans[0].startMs - 5000 };
  const a = rankTrace({ spans, baseline: healthy, kernelEvents: [e, far] });
  const gw = a.candidates.find((c) => c.service === 'gw')!;
  assert.equal(gw.rank, 1);
  assert.equal(gw.evidence.find((x) => x.kind === 'kernel:tls_handshake')!.count, 1);
  const off = rankTrace({ spans, baseline: healthy, kernelEvents: [e], config: { kernelLookbackMs: 0 } });
  assert.ok(!off.candidates.some((c) => c.evidence.some((x) => x.kind === 'kernel:tls_handshake')));
});

test('the critical path lists a span its children cover entirely (it frames them), with no time of its own on it', () => {
  const spans = [
    sp('1', undefined, 'gw', 'root', 'server', 0, 100),
    sp('2', '1', 'gw', 'call', 'client', 10, 90),
    sp('3', '2', 'a', 'frame', 'server', 10, 90),
    sp('4', '3', 'a', 'work', 'internal', 10, 90),
  ];
  const a = rankTrace({ spans });
  const path = a.criticalPath as Array<{ operation: string; onPathMs: number }>;
  assert.deepEqual(
    path.map((p) => p.operation),
    ['root', 'call', 'frame', 'work']
  );
  assert.equal(path[2].onPathMs, 0);
  assert.equal(path[3].onPathMs, 80);
});
