/**
 * The per-trace RCA's baseline gathering: a first click equals a warm one; a span-only source (Tempo) is served
 * stale-while-revalidate (a re-click past the TTL never waits on it), concurrent first clicks share one build.
 */
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Span, TraceDetail } from '../../../contract';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { EmbeddedTraceSource, type TraceSource } from '../../../backend-proxy/src/sources/traces';
import { RcaService, type TraceRootCause } from '../../../backend-proxy/src/services/rca';
import { TraceService } from '../../../backend-proxy/src/services/traces';
import { otlpToSpans } from '../../../backend-proxy/src/otlp/normalize';
import { buildBaseline, rankTrace } from '../../../backend-proxy/src/rca';
import { chainTrace, hex, otlp } from '../../support/otlp-spans';

const T0 = Date.now() - 600_000;
const healthy: Span[] = [];
for (let i = 0; i < 20; i++) healthy.push(...otlpToSpans(otlp(chainTrace(i, T0 + i * 1000, 100 + (i % 4) * 3))));
const slow = otlpToSpans(otlp(chainTrace(99, T0 + 30_000, 900)));
const SLOW_ID = hex(100, 32);

/** The root-cause service over this trace source, no exporters; a new one starts with an empty baseline cache. */
const rcaOver = (source: TraceSource): RcaService => new RcaService(new TraceService(source), []);
const strip = (a: TraceRootCause): unknown => ({
  ...a,
  tookMs: 0,
  sources: a.sources.map((s) => ({ ...s, latencyMs: 0 })),
});

test('embedded store: a first click answers exactly as a warm one', async () => {
  const store = new TraceStore({ maxSpans: 1e6, maxBytes: 1e12, maxAgeMs: 1e12 });
  store.add(healthy);
  store.add(slow);
  const source = new EmbeddedTraceSource(store);
  const rca = rcaOver(source);
  const cold = await rca.forTrace(SLOW_ID);
  assert.ok(!cold.missing.some((m) => m.startsWith('baseline')), cold.missing.join('; '));
  const warm = await rca.forTrace(SLOW_ID);
  const again = await rcaOver(source).forTrace(SLOW_ID);
  assert.deepEqual(strip(warm), strip(cold));
  assert.deepEqual(strip(again), strip(cold));
  assert.equal(cold.candidates[0].service, 'llm-vllm');
  // The same ranking as the engine given the store's baseline spans and the full `buildBaseline` (what the route
  // built before it took the statistics only).
  const detail = store.get(SLOW_ID)!;
  const keys = [
    ...new Map(detail.spans.map((s) => [`${s.service}\u0000${s.name}`, { service: s.service, name: s.name }])).values(),
  ];
  const start = Math.min(...detail.spans.map((s) => s.startMs));
  const ref = rankTrace({ spans: detail.spans, baseline: buildBaseline(store.baseline(keys, 200, SLOW_ID, start)) });
  assert.deepEqual(cold.candidates, ref.candidates);
  assert.deepEqual(cold.criticalPath, ref.criticalPath);
});

/** A source that can only hand over spans (like Tempo), with a controllable, counted baseline call. */
function spanOnlySource(): { source: TraceSource; calls: () => number; hold: () => () => void } {
  let calls = 0;
  let gate: Promise<void> | undefined;
  const source: TraceSource = {
    name: 'tempo-like',
    search: async () => [],
    get: async (id: string): Promise<TraceDetail | undefined> =>
      id.padStart(32, '0') === SLOW_ID ? { traceId: SLOW_ID, spans: slow } : undefined,
    baseline: async () => {
      calls++;
      if (gate) await gate;
      return healthy;
    },
    spansInWindow: async () => [],
    health: async () => undefined,
  };
  return {
    source,
    calls: () => calls,
    hold: () => {
      let open!: () => void;
      gate = new Promise<void>((r) => {
        open = r;
      });
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

test('span-only source: cached for the TTL, then served stale while one background refresh runs', async (t) => {
  let now = Date.now();
  t.mock.method(Date, 'now', () => now);
  const { source, calls, hold } = spanOnlySource();
  const rca = rcaOver(source);
  const first = await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 1);
  assert.ok(first.sources.find((s) => s.source === 'tempo-like (baseline)')?.ok);
  await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 1, 'within the TTL: cached');
  // Past the TTL: the click gets the previous baseline at once while the refresh is still waiting on the source.
  now += 11_000;
  const release = hold();
  const stale = await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 2, 'one background refresh');
  assert.deepEqual(strip(stale), strip(first));
  await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 2, 'no second refresh while one runs');
  release();
  await new Promise((r) => setImmediate(r));
  await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 2, 'refreshed: fresh again');
  // Far past it: too old to serve, the click waits for a new build.
  now += 120_000;
  await rca.forTrace(SLOW_ID);
  assert.equal(calls(), 3);
});

test('concurrent first clicks share one baseline build; a failing source degrades the answer and is retried', async () => {
  const { source, calls, hold } = spanOnlySource();
  const rca = rcaOver(source);
  const release = hold();
  const both = Promise.all([rca.forTrace(SLOW_ID), rca.forTrace(SLOW_ID)]);
  await new Promise((r) => setImmediate(r));
  release();
  const [a, b] = await both;
  assert.equal(calls(), 1);
  assert.deepEqual(strip(a), strip(b));

  const failing = {
    ...source,
    baseline: async (): Promise<Span[]> => {
      throw new Error('tempo down');
    },
  };
  const rca2 = rcaOver(failing);
  const r = await rca2.forTrace(SLOW_ID);
  assert.ok(
    r.missing.some((m) => m.startsWith('baseline:') && m.includes('tempo down')),
    r.missing.join('; ')
  );
  const mocked = mock.method(failing, 'baseline', async () => healthy);
  const ok = await rca2.forTrace(SLOW_ID);
  assert.equal(mocked.mock.callCount(), 1, 'a failed build is not cached');
  assert.ok(!ok.missing.some((m) => m.startsWith('baseline')));
});
