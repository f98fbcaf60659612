/**
 * The embedded store's precomputed RCA baseline: `store.baselineStats(...)` must equal `baselineStats` of the spans
 * `store.baseline(...)` returns (a full rebuild), whatever the warm-up did, after spans arrive, are replaced, or
 * traces are evicted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Span } from '../../../contract';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { otlpToSpans } from '../../../backend-proxy/src/otlp/normalize';
import { baselineStats, statsFromSamples, traceSamples } from '../../../backend-proxy/src/rca/baseline';
import { groupByTrace } from '../../../backend-proxy/src/rca';
import { chainTrace, hex, otlp, type SpanSpec } from '../../support/otlp-spans';

const T0 = 1_700_000_000_000;
const KEYS = [
  { service: 'gateway', name: 'POST /v1/chat' },
  { service: 'llm-vllm', name: 'chat llama' },
];
const spansOf = (specs: SpanSpec[]): Span[] => otlpToSpans(otlp(specs));
const noWarm = { enabled: false, sliceMs: 0, quietMs: 0 };
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** `store.baselineStats` and a full rebuild from `store.baseline`, for the same arguments. */
function both(store: TraceStore, except?: string, beforeMs?: number): { fast: unknown; full: unknown } {
  const spans = store.baseline(KEYS, 200, except, beforeMs);
  return {
    fast: store.baselineStats(KEYS, 200, except, beforeMs),
    full: spans.length ? baselineStats(spans) : undefined,
  };
}

test('merged per-trace samples equal baselineStats of the same traces', () => {
  const spans: Span[] = [];
  for (let i = 0; i < 12; i++) spans.push(...spansOf(chainTrace(i, T0 + i * 1000, 100 + (i % 5) * 7, i === 3 ? 2 : 1)));
  const traces = groupByTrace(spans);
  assert.deepEqual(statsFromSamples(traces.map(traceSamples)), baselineStats(spans));
  assert.deepEqual(statsFromSamples([]), baselineStats([]));
});

test('store.baselineStats equals a full rebuild: healthy only, the analysed trace excluded, earlier first, slow outliers dropped', () => {
  for (const warm of [false, true]) {
    const store = new TraceStore(
      { maxSpans: 1e6, maxBytes: 1e12, maxAgeMs: 1e12 },
      () => T0,
      warm ? undefined : noWarm
    );
    for (let i = 0; i < 40; i++)
      store.add(spansOf(chainTrace(i, T0 + i * 1000, 100 + (i % 7) * 5, i % 9 === 4 ? 2 : 1)));
    store.add(spansOf(chainTrace(50, T0 + 50_000, 5000))); // slow outlier: more than twice the median
    if (warm) store.warmUp(1e9);
    for (const [except, before] of [
      [undefined, undefined],
      [hex(11, 32), T0 + 20_500],
      [hex(1, 32), T0 + 100],
    ] as const) {
      const { fast, full } = both(store, except, before);
      assert.ok(fast, 'a baseline');
      assert.deepEqual(fast, full);
    }
    assert.equal(store.baselineStats([{ service: 'nope', name: 'x' }]), undefined);
    if (warm) assert.equal(store.sampleBuilds.onDemand, 0, 'the warm-up computed every healthy trace');
  }
});

test('samples follow the spans: late spans, a span replaced by an error and back', () => {
  const store = new TraceStore({ maxSpans: 1e6, maxBytes: 1e12, maxAgeMs: 1e12 }, () => T0, noWarm);
  for (let i = 0; i < 5; i++) store.add(spansOf(chainTrace(i, T0 + i * 1000, 100)));
  const first = both(store);
  assert.deepEqual(first.fast, first.full);
  const id = hex(2, 32);
  // A late child of a cached trace: its samples must be recomputed.
  store.add(
    spansOf([
      {
        traceId: id,
        spanId: hex(999, 16),
        parentSpanId: hex(13, 16),
        name: 'chat llama',
        service: 'llm-vllm',
        pod: 'llm-vllm-0',
        startMs: T0 + 1030,
        durMs: 40,
      },
    ])
  );
  const late = both(store);
  assert.deepEqual(late.fast, late.full);
  assert.notDeepEqual(late.fast, first.fast);
  // The same span id re-sent as an error: the trace leaves the baseline; re-sent ok: it comes back.
  const bad = spansOf(chainTrace(1, T0 + 1000, 100, 2)).filter((s) => s.name === 'chat llama');
  store.add(bad);
  const without = both(store);
  assert.deepEqual(without.fast, without.full);
  assert.equal((without.fast as { traces: number }).traces, 4);
  store.add(spansOf(chainTrace(1, T0 + 1000, 100)).filter((s) => s.name === 'chat llama'));
  const back = both(store);
  assert.deepEqual(back.fast, back.full);
  assert.equal((back.fast as { traces: number }).traces, 5);
  assert.equal(store.size.spans, 5 * 3 + 1, 're-sent spans replace, never duplicate');
});

test('evicted traces leave the baseline and the warm-up queue', async () => {
  let now = T0;
  const store = new TraceStore({ maxSpans: 15, maxBytes: 1e12, maxAgeMs: 10_000 }, () => now);
  for (let i = 0; i < 8; i++) store.add(spansOf(chainTrace(i, T0 + i * 1000, 100)));
  await tick();
  assert.ok(store.warmedUp);
  const { fast, full } = both(store);
  assert.deepEqual(fast, full);
  assert.equal((fast as { traces: number }).traces, 5, 'only the 5 traces the span bound keeps');
  now += 20_000;
  store.add(spansOf(chainTrace(20, T0 + 30_000, 100)));
  store.evict();
  const after = both(store);
  assert.deepEqual(after.fast, after.full);
  assert.equal((after.fast as { traces: number }).traces, 1, 'aged-out traces are gone');
  await tick();
  assert.ok(store.warmedUp);
});

test('warm-up: healthy traces once after ingest, error traces never, a growing trace again when doubled or quiet', async () => {
  let now = T0;
  const store = new TraceStore({ maxSpans: 1e6, maxBytes: 1e12, maxAgeMs: 1e12 }, () => now, {
    enabled: true,
    sliceMs: 50,
    quietMs: 250,
  });
  for (let i = 0; i < 6; i++) store.add(spansOf(chainTrace(i, T0 + i * 1000, 100, i === 5 ? 2 : 1)));
  assert.equal(store.sampleBuilds.warm, 0, 'nothing during ingest itself');
  await tick();
  assert.equal(store.sampleBuilds.warm, 5, 'the 5 healthy traces, not the failed one');
  assert.ok(store.warmedUp);
  // One more span (3 → 4, not doubled): deferred until the trace is quiet, but a click meanwhile is still exact.
  const id = hex(1, 32);
  store.add(
    spansOf([
      {
        traceId: id,
        spanId: hex(500, 16),
        parentSpanId: hex(1, 16),
        name: 'tool',
        service: 'agent',
        startMs: T0 + 10,
        durMs: 5,
      },
    ])
  );
  await tick();
  assert.equal(store.sampleBuilds.warm, 5);
  assert.equal(store.warmedUp, false);
  now += 1000;
  store.warmUp();
  assert.equal(store.sampleBuilds.warm, 6, 'quiet for longer than quietMs: warmed');
  // Doubled (4 → 8 spans): warmed right away.
  store.add(
    spansOf(
      [0, 1, 2, 3].map((k) => ({
        traceId: id,
        spanId: hex(600 + k, 16),
        parentSpanId: hex(1, 16),
        name: 'tool',
        service: 'agent',
        startMs: T0 + 10,
        durMs: 5,
      }))
    )
  );
  await tick();
  assert.equal(store.sampleBuilds.warm, 7);
  const { fast, full } = both(store);
  assert.deepEqual(fast, full);
  assert.equal(store.sampleBuilds.onDemand, 0);
  store.close();
});

test('ingest of a big trace is linear: re-sent span ids found by index, not by scanning', () => {
  const store = new TraceStore({ maxSpans: 1e7, maxBytes: 1e12, maxAgeMs: 1e12 }, () => T0, noWarm);
  const id = hex(7, 32);
  const spans: Span[] = Array.from({ length: 30_000 }, (_, i) => ({
    traceId: id,
    spanId: hex(i + 1, 16),
    ...(i ? { parentSpanId: hex(1, 16) } : {}),
    name: 'op',
    service: 's',
    kind: 'server',
    startMs: T0,
    endMs: T0 + 1,
    status: 'ok',
    attributes: {},
    resource: {},
  }));
  const t0 = performance.now();
  store.add(spans);
  store.add(spans.slice(0, 1000));
  const ms = performance.now() - t0;
  assert.equal(store.size.spans, 30_000);
  assert.ok(ms < 1500, `30,000 spans took ${ms.toFixed(0)} ms (quadratic?)`);
});
