/**
 * The engine's bounds on one trace (finding 1 of issue 20): copies of one span id past MAX_COPIES_PER_ID are left out
 * and said in `missing`; the shared-span split stays what it was (Zipkin client/server pairs).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Span } from '../../../contract';
import { capSpans, MAX_COPIES_PER_ID, MAX_SPANS_PER_TRACE } from '../../../backend-proxy/src/rca/caps';
import { rankTrace } from '../../../backend-proxy/src/rca';
import { splitSharedSpans } from '../../../backend-proxy/src/rca/shared-spans';

const span = (o: Partial<Span> & Pick<Span, 'spanId' | 'service' | 'startMs' | 'endMs'>): Span => ({
  traceId: 't1',
  name: 'op',
  kind: 'unspecified',
  status: 'ok',
  attributes: {},
  resource: {},
  ...o,
});

it('20,000 copies of one span id: ranked, the copies past the cap said in missing', () => {
  const spans: Span[] = [
    span({ spanId: 'aaaa000000000000', service: 'gateway', kind: 'server', startMs: 0, endMs: 30_000 }),
  ];
  for (let i = 0; i < 20_000; i++)
    spans.push(
      span({
        spanId: '00f067aa0ba902b7',
        parentSpanId: 'aaaa000000000000',
        service: `svc${i % 40}`,
        resource: { 'k8s.pod.name': `svc${i % 40}-${i % 13}` },
        startMs: i,
        endMs: i + 10 + (i % 7),
      })
    );
  const a = rankTrace({ spans });
  const line = a.missing.find((m) => m.includes(`beyond the first ${MAX_COPIES_PER_ID} under one span id`));
  assert.ok(line, a.missing.join(' | '));
  assert.match(line, new RegExp(`^spans: ${20_000 - MAX_COPIES_PER_ID} span`));
});

it('spans past the per-trace cap: the earliest-starting kept, said', () => {
  const n = MAX_SPANS_PER_TRACE + 5;
  const spans: Span[] = [];
  for (let i = n - 1; i >= 0; i--) spans.push(span({ spanId: `s${i}`, service: 'a', startMs: i, endMs: i + 1 }));
  const out = capSpans(spans);
  assert.equal(out.spans.length, MAX_SPANS_PER_TRACE);
  assert.ok(out.spans.every((s) => s.startMs < MAX_SPANS_PER_TRACE));
  assert.match(out.missing[0], /only the 100000 that started first were analysed/);
  assert.deepEqual(capSpans(spans.slice(0, 10)).missing, []);
});

it('the split: each other-hop side gets the next free id; spans under the shared id move under their hop side', () => {
  const spans: Span[] = [
    span({ spanId: 'root', service: 'gw', kind: 'server', startMs: 0, endMs: 100 }),
    span({ spanId: '0a', parentSpanId: 'root', service: 'gw', kind: 'client', startMs: 1, endMs: 90 }),
    span({ spanId: '0a', parentSpanId: 'root', service: 'rag', kind: 'server', startMs: 2, endMs: 80 }),
    span({ spanId: '0a', parentSpanId: 'root', service: 'llm', kind: 'server', startMs: 3, endMs: 70 }),
    // A retry of rag's side: same hop and window, left to the tree pass.
    span({ spanId: '0a', parentSpanId: 'root', service: 'rag', kind: 'server', startMs: 2, endMs: 80 }),
    span({ spanId: 'c1', parentSpanId: '0a', service: 'rag', kind: 'internal', startMs: 5, endMs: 10 }),
    span({ spanId: 'c2', parentSpanId: '0a', service: 'llm', kind: 'internal', startMs: 6, endMs: 9 }),
    span({ spanId: '0b', service: 'x', startMs: 0, endMs: 1 }),
  ];
  const out = splitSharedSpans(spans)!;
  assert.ok(out);
  // 0a + 1 = 0b is taken: rag's side gets 0c, llm's the next free one, 0d.
  assert.equal(out[2].spanId, '0c');
  assert.equal(out[2].parentSpanId, '0a');
  assert.equal(out[3].spanId, '0d');
  assert.equal(out[4].spanId, '0a', 'the retry keeps the shared id');
  assert.equal(out[5].parentSpanId, '0c');
  assert.equal(out[6].parentSpanId, '0d');
});
