import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KernelEvent } from '../../../contract';
import { histogram, quantile, sharedHistograms } from '../../../src/transforms/histogram';
import { describeDetail, eventsInWindow, kernelLanes, summarizeKernelEvents } from '../../../src/transforms/kernelEvidence';

test('histograms share edges and count every finite value once', () => {
  const [a, b] = sharedHistograms([[10, 20, 30, 1000], [15, 2000]], 10, 'log');
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
  ts, type, pid: 42, comm: 'python', pod: 'rag-0', detail: { dst: '10.0.0.7:443' }, mode: 'live', ...extra,
});

test('kernel events become ordered lanes per signal with a summary', () => {
  const events = [
    ev(300, 'tls_handshake', { durationMs: 600, traceId: 'a'.repeat(32) }),
    ev(100, 'tls_handshake', { durationMs: 20 }),
    ev(200, 'tcp_retransmit'),
    ev(250, 'gpu_alloc_fail', { mode: 'replay' }),
    ev(260, 'http_traceparent'),
  ];
  const lanes = kernelLanes(events);
  assert.deepEqual(lanes.map((l) => l.type), ['tcp_retransmit', 'tcp_connect', 'tcp_connect_fail', 'tls_handshake', 'gpu_alloc_fail']);
  assert.deepEqual(lanes[3].events.map((e) => e.ts), [100, 300]);
  const s = summarizeKernelEvents(events);
  assert.equal(s.counts.tls_handshake, 2);
  assert.equal(s.tlsP50Ms, 310);
  assert.equal(s.withTrace, 1);
  assert.equal(s.replay, true, 'replayed data is never passed off as live');
  assert.deepEqual(eventsInWindow(events, 150, 260).map((e) => e.ts), [200, 250, 260]);
  assert.equal(describeDetail({ dst: '10.0.0.7:443', n: 3, nested: { x: 1 } }), 'dst=10.0.0.7:443 n=3');
});

test('the slowest traces come first, errors first among equals, newest-first input notwithstanding', async () => {
  const { slowestTraces } = await import('../../../src/transforms/traces');
  const t = (id: string, durationMs: number, status: 'ok' | 'error' = 'ok') => ({ traceId: id, rootService: 'gateway', rootName: 'POST', startMs: 0, durationMs, status });
  const out = slowestTraces([t('a', 10), t('b', 2000), t('c', 300), t('d', 2000, 'error'), t('e', 5)], 3);
  assert.deepEqual(out.map((x) => x.traceId), ['d', 'b', 'c']);
});
