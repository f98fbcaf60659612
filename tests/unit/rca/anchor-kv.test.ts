import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { rng } from '../../support/rca/synthetic';
import { sp } from './helpers';

/** gw → emb (embedding) then gw → llm (chat, prefix-cache reads `cached` of 400 input tokens); jitter from the seed. */
function req(
  seed: number,
  o: { gwSelf?: number; embSelf?: number; llmSelf?: number; cached?: number; traceId?: string } = {}
): Span[] {
  const r = rng(seed);
  const j = (x: number): number => x * (0.95 + 0.1 * r());
  const t1 = 2 + (o.gwSelf ?? 0);
  const embEnd = t1 + 1 + (o.embSelf ?? j(5));
  const llmStart = embEnd + 1;
  const llmEnd = llmStart + 1 + (o.llmSelf ?? j(30));
  const llmAttrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.usage.input_tokens': 400,
    'gen_ai.usage.cache_read.input_tokens': o.cached ?? 120 + Math.round(20 * r()),
  };
  const spans = [
    sp('1', undefined, 'gw', 'POST /', 'server', 0, llmEnd + 1),
    sp('2', '1', 'gw', 'embed', 'client', t1, embEnd),
    sp('3', '2', 'emb', 'embed', 'server', t1 + 0.5, embEnd - 0.5),
    sp('4', '1', 'gw', 'chat', 'client', llmStart, llmEnd),
    sp('5', '4', 'llm', 'chat', 'server', llmStart + 0.5, llmEnd - 0.5, { attributes: llmAttrs }),
  ];
  return o.traceId ? spans.map((s) => ({ ...s, traceId: o.traceId! })) : spans;
}
const healthy = buildBaseline(Array.from({ length: 30 }, (_, i) => req(i + 1)));

test('a KV-cache hit rate collapsed against its baseline is evidence at the hop, small next to any latency excess', () => {
  const thrash = rankTrace({ spans: req(50, { cached: 0 }), baseline: healthy });
  RcaAnswer.parse(thrash);
  assert.equal(thrash.candidates[0].service, 'llm');
  const ev = thrash.candidates[0].evidence.find((e) => e.kind === 'kv_cache_drop')!;
  assert.ok(ev, JSON.stringify(thrash.candidates[0]));
  assert.equal(ev.hitRate, 0);
  assert.ok((ev.baselineHitRate as number) > 0.28 && (ev.baselineHitRate as number) < 0.36);
  assert.ok(thrash.candidates[0].score > 0.04 && thrash.candidates[0].score < 0.06);
  // A usual hit rate (or a mild dip) is not evidence.
  for (const cached of [125, 60]) {
    const calm = rankTrace({ spans: req(51, { cached }), baseline: healthy });
    assert.ok(
      calm.candidates.every((c) => c.evidence.every((e) => e.kind !== 'kv_cache_drop')),
      String(cached)
    );
  }
  // Real extra time elsewhere outranks it.
  const both = rankTrace({
    spans: req(52, { cached: 0, embSelf: 25 }),
    baseline: healthy,
    config: { sloMs: { gw: 20 } },
  });
  assert.equal(both.candidates[0].service, 'emb');
  assert.equal(both.candidates[1].service, 'llm');
  assert.ok(both.candidates[1].evidence.some((e) => e.kind === 'kv_cache_drop'));
  // No baseline hit rate to compare with: nothing said.
  const noBase = rankTrace({ spans: req(53, { cached: 0 }) });
  assert.ok(noBase.candidates.every((c) => c.evidence.every((e) => e.kind !== 'kv_cache_drop')));
  // In a window it is averaged over the traces like errors.
  const w = rankWindow({
    traces: [req(60, { cached: 0, traceId: '1'.repeat(32) }), req(61, { cached: 0, traceId: '2'.repeat(32) })],
    baseline: healthy,
  });
  assert.equal(w.candidates[0].service, 'llm');
  assert.ok(w.candidates[0].evidence.some((e) => e.kind === 'kv_cache_drop' && e.traces === 2));
});

test('a root within its SLO with breaches in two branches anchors on the span framing both, so neither is hidden', () => {
  const config = { sloMs: { gw: 1000, emb: 10, llm: 40 } };
  const spans = req(70, { embSelf: 30, llmSelf: 60 });
  const a = rankTrace({ spans, baseline: healthy, config });
  assert.equal(a.anchor!.spanId, spans[0].spanId);
  assert.match(a.anchor!.reason, /2 spans breached their SLO/);
  const names = a.candidates
    .filter((c) => c.evidence.some((e) => e.kind === 'self_time'))
    .map((c) => c.service)
    .sort();
  assert.deepEqual(names, ['emb', 'llm']);
  assert.equal(a.candidates[0].service, 'llm'); // 30 ms above baseline vs emb's 25
  // One breach: the anchor is that span, as before.
  const one = rankTrace({ spans: req(71, { llmSelf: 60 }), baseline: healthy, config });
  assert.equal(one.anchor!.spanId, '5'.padStart(16, '0'));
  assert.match(one.anchor!.reason, /a span breached its SLO/);
  // A breaching span and a breaching child of it: the outer one frames both.
  const nested = req(72, { llmSelf: 60 });
  const b = rankTrace({ spans: nested, baseline: healthy, config: { sloMs: { gw: 1000, llm: 40 }, sloFactor: 1.01 } });
  assert.ok([nested[3].spanId, nested[4].spanId].includes(b.anchor!.spanId));
  assert.equal(b.candidates[0].service, 'llm');
});

test('a root far outside its usual spread anchors the analysis even when one cold start loosened its p99 SLO', () => {
  // One healthy request paid a 300 ms cold start: p99 × 1.5 of the root is ~350 ms, an SLO nothing realistic breaches.
  const loose = buildBaseline([...Array.from({ length: 29 }, (_, i) => req(i + 1)), req(30, { llmSelf: 300 })]);
  // gw itself is 40 ms slow; emb is a little slow too and breaches its own (tight) SLO.
  const spans = req(80, { gwSelf: 40, embSelf: 12 });
  const a = rankTrace({ spans, baseline: loose });
  assert.equal(a.anchor!.spanId, spans[0].spanId);
  assert.match(a.anchor!.reason, /the root span took .* usually \(z=/);
  assert.equal(a.candidates[0].service, 'gw');
  assert.ok(a.candidates.some((c) => c.service === 'emb' && c.evidence.some((e) => e.kind === 'self_time')));
  // Within its spread, the root does not anchor by itself: the breaching span does.
  const calm = rankTrace({ spans: req(81, { embSelf: 9 }), baseline: loose });
  assert.equal(calm.anchor!.spanId, '2'.padStart(16, '0')); // gw's call to emb, which breached too and frames it
});

test('expected edges on a deep same-service chain: the skipped hop is still reported', () => {
  const n = 5000;
  const spans = Array.from({ length: n }, (_, i) =>
    sp(String(i + 1), i ? String(i) : undefined, 'a', `s${i}`, 'internal', i, 2 * n - i)
  );
  spans.push(sp(String(n + 1), String(n), 'c', 'leaf', 'server', n, n + 1));
  const a = rankTrace({
    spans,
    config: {
      expectedEdges: [
        ['a', 'b'],
        ['b', 'c'],
      ],
    },
  });
  assert.ok(
    a.missing.some((m) => /a span from b between a and c/.test(m)),
    JSON.stringify(a.missing)
  );
  assert.ok(a.candidates.find((c) => c.service === 'b')!.evidence.some((e) => e.kind === 'broken_propagation'));
  const ok = rankTrace({ spans, config: { expectedEdges: [['a', 'c']] } });
  assert.ok(!ok.missing.some((m) => /between/.test(m)));
});
