import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KernelEvent, PodKernelEventsAnswer } from '../../../contract';
import { describeDetail, kernelNotices } from '../../../src/datasource/frames/kernel';
import { histogram, quantile, sharedHistograms } from '../../../src/transforms/histogram';

test('histograms share edges and count every finite value once', () => {
  const [a, b] = sharedHistograms(
    [
      [10, 20, 30, 1000],
      [15, 2000],
    ],
    10,
    'log'
  );
  assert.deepEqual(a.edges, b.edges);
  assert.equal(a.edges[0], 10);
  assert.ok(Math.abs(a.edges[10] - 2000) < 1e-6);
  assert.equal(a.total, 4);
  assert.equal(b.total, 2);
  assert.equal(b.counts[b.counts.length - 1], 1, 'the max falls in the last bin');
  const h = histogram([0, 0.5, 1, NaN, 2], [0, 0.5, 1]);
  assert.deepEqual(h.counts, [1, 2]);
  assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
  assert.equal(quantile([], 0.5), undefined);
});

const ev = (ts: number, type: KernelEvent['type'], extra: Partial<KernelEvent> = {}): KernelEvent => ({
  ts,
  type,
  pid: 42,
  comm: 'python',
  pod: 'rag-0',
  detail: { dst: '10.0.0.7:443' },
  mode: 'live',
  ...extra,
});

test("a pod's kernel events: what the reader must know is said (replay, truncation, TLS and connect figures)", () => {
  const events = [
    ev(300, 'tls_handshake', { durationMs: 600, traceId: 'a'.repeat(32) }),
    ev(100, 'tls_handshake', { durationMs: 20 }),
    ev(200, 'tcp_retransmit'),
    ev(250, 'gpu_alloc_fail', { mode: 'replay' }),
    ev(260, 'http_traceparent'),
  ];
  const answer: PodKernelEventsAnswer = {
    pod: 'rag-0',
    from: 0,
    to: 1000,
    events,
    counts: {},
    dropped: 0,
    truncated: false,
    sources: [],
  };
  const texts = kernelNotices(answer).map((n) => n.text);
  assert.ok(texts.includes('Replayed data, not live.'), 'replayed data is never passed off as live');
  assert.ok(!texts.some((t) => /Truncated/.test(t)));
  assert.match(texts.at(-1)!, /TLS P50 310 ms, P99 59\d ms · connect P99 — · 1 events carry a trace id/);
  assert.equal(describeDetail({ dst: '10.0.0.7:443', n: 3, nested: { x: 1 } }), 'dst=10.0.0.7:443 n=3');
});
