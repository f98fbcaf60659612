/**
 * The embedded store's ingest counters: every span received is counted, a head-sampled trace's healthy spans are
 * scaled by the rate recorded on its root (also when the root arrives after its children), failed spans count once,
 * a trace the head sampler dropped and kept only for its errors adds no healthy requests, the Collector's
 * probability scales its spans, and cells past the retention are forgotten. Rates are drawn by a seeded sampler
 * over thousands of traces, so the scaled estimate is checked against the true count it stands for.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Span } from '../../../contract';
import { CELL_MS, histQuantile, RequestCounters } from '../../../backend-proxy/src/store/request-counters';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { hex } from '../../support/otlp-spans';

const T0 = 1_700_000_000_000;

function span(
  o: Partial<Span> & { traceId: string; spanId: string; service: string; startMs: number; endMs: number }
): Span {
  return {
    name: 'op',
    kind: 'server',
    status: 'ok',
    attributes: {},
    resource: { 'service.name': o.service, 'k8s.pod.name': `${o.service}-0` },
    ...o,
  };
}

/** A two-hop trace: rag (child) then gateway (root, last); the root carries the sampler's rate when kept. */
function trace(i: number, at: number, o: { rate?: number; failed?: boolean; durMs?: number } = {}): Span[] {
  const t = hex(i + 1, 32);
  const d = o.durMs ?? 100;
  return [
    span({
      traceId: t,
      spanId: hex(2 * i + 2, 16),
      parentSpanId: hex(2 * i + 1, 16),
      service: 'rag',
      startMs: at + 5,
      endMs: at + 5 + d / 2,
      status: o.failed ? 'error' : 'ok',
    }),
    span({
      traceId: t,
      spanId: hex(2 * i + 1, 16),
      service: 'gateway',
      startMs: at,
      endMs: at + d,
      status: o.failed ? 'error' : 'ok',
      attributes: o.rate ? { 'hopscope.sampler.rate': o.rate } : {},
    }),
  ];
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sum = (
  rows: ReturnType<RequestCounters['window']>,
  service: string,
  f: 'requests' | 'errors' | 'spans' | 'errorSpans'
) => rows.filter((r) => r.service === service).reduce((n, r) => n + r[f], 0);

describe('ingest counters', () => {
  it("counts an engine's own server span inside its hop's server span once, whichever arrives first; two calls twice", () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 600_000 });
    const llm = (t: string, id: string, parent: string, name: string, at: number) =>
      span({ traceId: t, spanId: id, parentSpanId: parent, service: 'llm-vllm', name, startMs: at, endMs: at + 50 });
    // The engine span ends (and arrives) before its hop span, as an exporter sends them.
    c.received([llm(hex(1, 32), hex(11, 16), hex(10, 16), 'llm_request', T0 + 1)]);
    c.received([llm(hex(1, 32), hex(10, 16), hex(9, 16), 'POST /v1/chat/completions', T0)]);
    // The hop span first, then the engine span.
    c.received([
      llm(hex(2, 32), hex(20, 16), hex(19, 16), 'POST /v1/chat/completions', T0 + 100),
      llm(hex(2, 32), hex(21, 16), hex(20, 16), 'llm_request', T0 + 101),
    ]);
    // An agent calling the LLM twice in one trace: two requests.
    c.received([
      llm(hex(3, 32), hex(30, 16), hex(28, 16), 'POST /v1/chat/completions', T0 + 200),
      llm(hex(3, 32), hex(31, 16), hex(29, 16), 'POST /v1/chat/completions', T0 + 300),
    ]);
    const rows = c.window(T0, T0 + 1000 + CELL_MS);
    const requestRows = rows.filter((r) => r.request);
    assert.equal(sum(requestRows, 'llm-vllm', 'requests'), 4);
    assert.equal(sum(rows, 'llm-vllm', 'spans'), 6);
  });

  it('counts every span of an unsampled stream exactly, by service and pod', () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 600_000 });
    for (let i = 0; i < 300; i++) c.received(trace(i, T0 + i * 1000, { failed: i % 30 === 0 }));
    const rows = c.window(T0, T0 + 300_000 + CELL_MS);
    assert.equal(sum(rows, 'gateway', 'requests'), 300);
    assert.equal(sum(rows, 'rag', 'spans'), 300);
    assert.equal(sum(rows, 'gateway', 'errors'), 10);
    assert.ok(rows.every((r) => r.scaledSpans === 0));
    assert.deepEqual([...new Set(rows.map((r) => r.pod))].sort(), ['gateway-0', 'rag-0']);
  });

  it('scales a head-sampled stream by the rate on its roots (children first), errors counted once', () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 3600_000 - 1 });
    const rand = rng(7);
    const rate = 0.25;
    let truth = 0;
    let errors = 0;
    let kept = 0;
    for (let i = 0; i < 20_000; i++) {
      const failed = rand() < 0.02;
      truth++;
      if (failed) errors++;
      const sampled = rand() < rate;
      // Kept: the head sampler kept it (rate on the root), or it failed (exported anyway, no rate on the root).
      if (sampled) {
        c.received(trace(i, T0 + i * 100, { rate, failed }));
        kept++;
      } else if (failed) c.received(trace(i, T0 + i * 100, { failed }));
    }
    const rows = c.window(T0, T0 + 2_000_000 + CELL_MS);
    const est = sum(rows, 'gateway', 'requests');
    assert.ok(
      Math.abs(est - truth) / truth < 0.03,
      `estimated ${est.toFixed(0)} requests, truth ${truth} (${kept} kept)`
    );
    assert.equal(sum(rows, 'gateway', 'errors'), errors, 'failed requests are counted exactly');
    assert.ok(
      Math.abs(sum(rows, 'rag', 'requests') - truth) / truth < 0.03,
      'the children (arriving before their root) are scaled too'
    );
    assert.ok(sum(rows, 'gateway', 'spans') < truth / 2, 'spans received stay what was received');
  });

  it('a root without its rate while its service samples: a trace kept for its errors adds no healthy requests', () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 60_000 });
    c.received(trace(0, T0, { rate: 0.5 }));
    // Dropped by the head sampler; its rag span failed and was exported with the path to the root (healthy root).
    const t = trace(1, T0 + 1000);
    t[0].status = 'error';
    c.received(t);
    const rows = c.window(T0, T0 + 10_000);
    assert.equal(sum(rows, 'gateway', 'requests'), 2, 'the kept trace stands for 2, the error-kept root for none');
    assert.equal(sum(rows, 'rag', 'requests'), 3, 'rag: 2 from the kept trace + its failed span');
    assert.equal(sum(rows, 'rag', 'errors'), 1);
  });

  it("the Collector's sampling probability scales its spans", () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 60_000 });
    const t = trace(0, T0);
    for (const s of t) s.attributes['hopscope.sampling.probability'] = 0.1;
    c.received(t);
    assert.equal(Math.round(sum(c.window(T0, T0 + 10_000), 'gateway', 'requests')), 10);
  });

  it('latency percentiles within 2%; cells past the retention forgotten; old spans skipped', () => {
    let now = T0 + 10_000;
    const c = new RequestCounters({ maxAgeMs: 60_000, now: () => now });
    for (let i = 0; i < 100; i++) c.received(trace(i, T0 + i * 10, { durMs: 10 * (i + 1) }));
    const gw = c.window(T0, T0 + 10_000).filter((r) => r.service === 'gateway');
    const p50 = histQuantile(gw[0].hist, gw[0].zero, 0.5)!;
    const p99 = histQuantile(gw[0].hist, gw[0].zero, 0.99)!;
    assert.ok(Math.abs(p50 - 500) / 500 < 0.03, `p50 ${p50}`);
    assert.ok(Math.abs(p99 - 990) / 990 < 0.03, `p99 ${p99}`);
    now = T0 + 200_000;
    c.sweep();
    assert.equal(c.window(T0, T0 + 10_000).length, 0);
    assert.equal(c.size.series, 0);
    c.received(trace(500, T0));
    assert.equal(c.skipped.old, 2);
  });

  it("in the store: a span re-sent (an exporter's retry) is counted once, counts outlive the spans the store drops", () => {
    const store = new TraceStore({ maxSpans: 100, maxBytes: 1e9, maxAgeMs: 3600_000 }, () => T0 + 60_000, {
      enabled: false,
      sliceMs: 1,
      quietMs: 1,
    });
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 60_000 });
    store.observe(c);
    store.add(trace(0, T0));
    store.add(trace(0, T0));
    for (let i = 1; i < 200; i++) store.add(trace(i, T0 + i * 100));
    assert.ok(store.size.spans <= 100, 'the store dropped traces');
    assert.equal(sum(c.window(T0, T0 + 30_000), 'gateway', 'requests'), 200);
    store.close();
  });

  it('a window pro-rates the cells at its edges', () => {
    const c = new RequestCounters({ maxAgeMs: 3600_000, now: () => T0 + 60_000 });
    const at = Math.floor(T0 / CELL_MS) * CELL_MS;
    for (let i = 0; i < 10; i++) c.received(trace(i, at + i * 100, { durMs: 1 }));
    assert.equal(sum(c.window(at, at + CELL_MS / 2), 'gateway', 'requests'), 5);
  });
});
