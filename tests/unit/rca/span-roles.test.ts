import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { inferCallRoles } from '../../../backend-proxy/src/rca/roles';
import { buildTree, linkSpans } from '../../../backend-proxy/src/rca/tree';
import { rng } from '../../support/rca/synthetic';
import { sp } from './helpers';

interface Fault {
  slow?: string;
  delayInto?: string;
  fail?: string;
}

/**
 * gw (server "POST /chat") calls embedding and cache in parallel, then rag; rag does local work and calls llm. Each
 * call is a client span on the caller and a server span on the callee, with ~1 ms of network on each side; jitter
 * from the seed. `slow`: +80 ms of own work; `delayInto`: +60 ms of network into that service; `fail`: it errors.
 */
function chat(seed: number, f: Fault = {}, traceNo = seed): Span[] {
  const r = rng(seed);
  const j = (x: number): number => x * (0.9 + 0.2 * r());
  const traceId = traceNo.toString(16).padStart(32, '0');
  let id = 0;
  const spans: Span[] = [];
  const add = (
    parent: Span | undefined,
    service: string,
    name: string,
    kind: Span['kind'],
    start: number,
    end: number
  ): Span => {
    const s = sp((++id).toString(16), parent ? parent.spanId : undefined, service, name, kind, start, end, { traceId });
    if (f.fail === service && kind === 'server') s.status = 'error';
    spans.push(s);
    return s;
  };
  /** A call from `parent` at `t` into `service`'s work of `work` ms; returns its end. */
  const call = (
    parent: Span,
    service: string,
    t: number,
    work: number,
    inside?: (server: Span, t: number) => number
  ): number => {
    const net = j(1) + (f.delayInto === service ? 60 : 0);
    const own = work + (f.slow === service ? 80 : 0);
    const client = add(parent, parent.service, `call ${service}`, 'client', t, 0);
    const server = add(client, service, `${service} handle`, 'server', t + net / 2, 0);
    const innerEnd = inside ? inside(server, server.startMs + own / 2) : server.startMs + own / 2;
    server.endMs = innerEnd + own / 2;
    client.endMs = server.endMs + net / 2;
    if (f.fail === service) client.status = 'error';
    return client.endMs;
  };
  const root = add(undefined, 'gw', 'POST /chat', 'server', 0, 0);
  const e1 = call(root, 'embedding', 1, j(20));
  const e2 = call(root, 'cache', 1, j(8));
  const e3 = call(root, 'rag', Math.max(e1, e2) + 0.5, j(10), (rag, t) => {
    const local = add(rag, 'rag', 'rank documents', 'internal', t, t + j(5));
    return call(rag, 'llm', local.endMs + 0.2, j(200));
  });
  root.endMs = e3 + 1;
  return spans;
}

/** As an instrumentation that sets no kind sends it: every kind `unspecified` (or `internal`), nothing else changed. */
const strip = (spans: Span[], kind: Span['kind'] = 'unspecified'): Span[] => spans.map((s) => ({ ...s, kind }));
const services = (a: RcaAnswer): string[] => [...new Set(a.candidates.map((c) => c.service))];
const healthy = Array.from({ length: 40 }, (_, i) => chat(i + 1));
const withKinds = buildBaseline(healthy);
const kindless = buildBaseline(healthy.map((t) => strip(t)));
const internalOnly = buildBaseline(healthy.map((t) => strip(t, 'internal')));

for (const [what, fault, want] of [
  ['a slow hop', { slow: 'llm' }, 'llm'],
  ['a slow hop in a parallel branch', { slow: 'embedding' }, 'embedding'],
  ['network delay into a hop (client→server gap)', { delayInto: 'rag' }, 'rag'],
  ['network delay into a leaf', { delayInto: 'cache' }, 'cache'],
  ['an error hop', { fail: 'llm' }, 'llm'],
] as const) {
  test(`kind-less trace, ${what}: the same ranking as with kinds`, () => {
    const spans = chat(1000 + want.length, fault);
    const a = rankTrace({ spans, baseline: withKinds });
    for (const kind of ['unspecified', 'internal'] as const) {
      const b = rankTrace({ spans: strip(spans, kind), baseline: kind === 'internal' ? internalOnly : kindless });
      RcaAnswer.parse(b);
      assert.equal(services(a)[0], want, services(a).join(','));
      assert.deepEqual(services(b), services(a), kind);
      assert.deepEqual(
        b.candidates.map((c) => c.score),
        a.candidates.map((c) => c.score),
        kind
      );
      // The same critical path, the call roles put back (local spans keep the kind they said: none).
      const roles = (x: RcaAnswer): unknown[] =>
        x.criticalPath.map((p) => [p.service, p.operation, p.kind === 'internal' ? 'unspecified' : p.kind, p.gapMs]);
      assert.deepEqual(roles(b), roles(a));
    }
  });
}

test('evidence through an inferred call says so; the answer names the gap once in missing', () => {
  const spans = strip(chat(77, { delayInto: 'rag' }));
  const b = rankTrace({ spans, baseline: kindless });
  const top = b.candidates[0];
  assert.equal(top.service, 'rag');
  const gap = top.evidence.find((e) => e.kind === 'client_server_gap')!;
  assert.match(gap.summary, /call inferred from the tree \(no span kinds\)/);
  const inferred = top.evidence.filter((e) => e.kind === 'inferred_call');
  assert.equal(inferred.length, 1);
  assert.match(
    inferred[0].summary,
    /gw → rag: call inferred from the tree \(no span kinds\): rag's span "rag handle" runs under gw's "call rag"/
  );
  assert.equal(b.missing.filter((m) => /client→server calls were inferred from the tree/.test(m)).length, 1);
  // With kinds: nothing inferred, nothing said.
  const a = rankTrace({ spans: chat(77, { delayInto: 'rag' }), baseline: withKinds });
  assert.ok(
    a.candidates.every((c) => c.evidence.every((e) => e.kind !== 'inferred_call' && !/inferred/.test(e.summary)))
  );
  assert.ok(a.missing.every((m) => !/inferred/.test(m)));
});

test('window RCA on kind-less traces: the faulted hop first, as with kinds; the window says calls were inferred', () => {
  const traces = Array.from({ length: 30 }, (_, i) =>
    chat(500 + i, i % 10 < 4 ? { delayInto: 'embedding' } : {}, 10_000 + i)
  );
  const a = rankWindow({ traces, baseline: withKinds });
  const b = rankWindow({ traces: traces.map((t) => strip(t)), baseline: kindless });
  assert.equal(services(a)[0], 'embedding');
  assert.deepEqual(services(b), services(a));
  const ev = b.candidates[0].evidence.find((e) => e.kind === 'inferred_call')!;
  assert.match(ev.summary, /inferred from the trace tree/);
  assert.ok(
    b.missing.some((m) => /calls were inferred from the tree.*\(in \d+ traces\)/.test(m)),
    b.missing.join('\n')
  );
  assert.equal(b.window.anomalousTraces, a.window.anomalousTraces);
});

test('mixed trace: services with kinds keep them, the kind-less one gets roles; the same ranking', () => {
  const spans = chat(31, { delayInto: 'llm' });
  // rag's instrumentation sets no kinds (its server span and its client span to llm); the others do.
  const mixed = spans.map((s) => (s.service === 'rag' ? { ...s, kind: 'unspecified' as const } : s));
  const a = rankTrace({ spans, baseline: withKinds });
  const b = rankTrace({
    spans: mixed,
    baseline: buildBaseline(
      healthy.map((t) => t.map((s) => (s.service === 'rag' ? { ...s, kind: 'unspecified' as const } : s)))
    ),
  });
  assert.equal(services(a)[0], 'llm');
  assert.deepEqual(services(b), services(a));
  const r = inferCallRoles(linkSpans(mixed))!;
  assert.deepEqual(
    r.spans.filter((s) => s.service === 'rag').map((s) => [s.name, s.kind]),
    [
      ['rag handle', 'server'],
      ['rank documents', 'unspecified'],
      ['call llm', 'client'],
    ]
  );
  assert.ok(
    r.spans
      .filter((s) => s.service !== 'rag')
      .every((s, i) => s.kind === spans.filter((x) => x.service !== 'rag')[i].kind)
  );
});

test('roles: real kinds untouched (no copy); a parent with other children is not made a client; a span.kind tag counts', () => {
  const spans = chat(5);
  assert.equal(inferCallRoles(linkSpans(spans)), undefined);
  const t0 = buildTree(spans);
  assert.equal(t0.spans, spans);

  // a's handler calls b and c directly (no client spans), and does its own work between: no gap can be measured.
  const direct = [
    sp('1', undefined, 'a', 'handle', 'unspecified', 0, 100),
    sp('2', '1', 'b', 'b work', 'unspecified', 10, 40),
    sp('3', '1', 'c', 'c work', 'unspecified', 50, 90),
  ];
  const r = inferCallRoles(linkSpans(direct))!;
  assert.deepEqual(
    r.spans.map((s) => s.kind),
    ['server', 'server', 'server']
  );
  assert.equal(r.calls, 0);
  const t = buildTree(direct);
  assert.equal(t.serverChild[0], -1);
  assert.ok(Number.isNaN(t.gap[0]));
  assert.equal(t.self[0], 100 - 30 - 40);

  // One span per service in a chain: each is its caller's server side, never also a client (its own work stays its own).
  const chain = [
    sp('1', undefined, 'a', 'a', 'internal', 0, 100),
    sp('2', '1', 'b', 'b', 'internal', 5, 95),
    sp('3', '2', 'c', 'c', 'internal', 10, 20),
  ];
  assert.deepEqual(
    inferCallRoles(linkSpans(chain))!.spans.map((s) => s.kind),
    ['client', 'server', 'server']
  );
  // A kind-less root that is not a call is where the request entered: a server span.
  assert.equal(inferCallRoles(linkSpans(direct))!.spans[0].kind, 'server');

  // Another pod of the same service is remote too; a tag says the kind of an unspecified span (not inferred).
  const pods = [
    sp('1', undefined, 'a', 'handle', 'server', 0, 100),
    sp('2', '1', 'a', 'call', 'unspecified', 10, 90, { attributes: { 'span.kind': 'client' } }),
    sp('3', '2', 'a', 'other replica', 'unspecified', 12, 88, {
      resource: { 'service.name': 'a', 'k8s.pod.name': 'a-1' },
    }),
  ];
  const p = inferCallRoles(linkSpans(pods))!;
  assert.deepEqual(
    p.spans.map((s) => s.kind),
    ['server', 'client', 'server']
  );
  assert.deepEqual([...p.inferred], [0, 0, 1]);
  assert.equal(pods[1].kind, 'unspecified'); // the input is not changed

  // A kind-less leaf naming another service as its peer (a Zipkin remote endpoint) called it.
  const leaf = [
    sp('1', undefined, 'a', 'handle', 'unspecified', 0, 100),
    sp('2', '1', 'a', 'get', 'unspecified', 10, 60, { attributes: { 'peer.service': 'memcache' } }),
  ];
  assert.deepEqual(
    inferCallRoles(linkSpans(leaf))!.spans.map((s) => s.kind),
    ['server', 'client']
  );
  const slowCache = rankTrace({ spans: leaf });
  assert.equal(slowCache.candidates[0].service, 'memcache');
});
