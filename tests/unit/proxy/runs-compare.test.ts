/**
 * Run compare over the embedded store: the run index follows the store (ingest and eviction), the window root cause of
 * a run against its baseline run ranks the hop that changed, per-hop exclusive-time deltas say by how much, and what
 * is missing is said. Traces are seeded synthetic chain traces (tests/support/rca/synthetic.ts) carrying the
 * `hopscope.run_id` the chain copies from baggage; the run records are plain objects (no database here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunCompareAnswer, type RunRecord, type Span } from '../../../contract';
import { DomainError } from '../../../backend-proxy/src/domain/errors';
import { EmbeddedRunTraces, RunCompareService } from '../../../backend-proxy/src/services/run-compare';
import { RunIndex } from '../../../backend-proxy/src/store/run-index';
import { TraceStore } from '../../../backend-proxy/src/store/trace-store';
import { syntheticTrace, type SyntheticFault } from '../../support/rca/synthetic';

const T0 = 1_767_225_600_000;

/** `n` traces of one run, 50 ms apart, every span carrying the run id (as the chain's hop servers do). */
function runTraces(runId: string, seed: number, n: number, startMs: number, fault?: SyntheticFault): Span[] {
  const out: Span[] = [];
  for (let i = 0; i < n; i++) {
    const t = syntheticTrace({
      seed: seed * 100_003 + i,
      startMs: startMs + i * 50,
      fault,
      kernelNoise: 0,
      strayRetransmits: 0,
    });
    for (const s of t.spans) out.push({ ...s, attributes: { ...s.attributes, 'hopscope.run_id': runId } });
  }
  return out;
}

function record(runId: string, startMs: number, endMs: number | null, e2eP99Ms: number): RunRecord {
  return {
    runId,
    scenario: 'single-turn-short',
    status: endMs === null ? 'running' : 'passed',
    startMs,
    endMs,
    durationS: endMs === null ? null : (endMs - startMs) / 1000,
    targetRps: 20,
    achievedRps: 20,
    ttftP99Ms: e2eP99Ms / 2,
    e2eP99Ms,
    goodputRatio: 1,
    errors: 0,
    errorRate: 0,
    workers: 1,
    live: null,
    target: 'http://127.0.0.1:3310/v1/chat/completions',
    options: {},
    baselineRunId: null,
    thresholds: [],
    regressions: [],
    summary: null,
    merge: null,
    faults: [],
    slowest: [],
    failed: [],
    abortReason: null,
  };
}

function setup(limits = { maxSpans: 1_000_000, maxBytes: 4 * 1024 ** 3, maxAgeMs: 10 * 365 * 86_400_000 }) {
  const store = new TraceStore(limits, Date.now, { enabled: false, sliceMs: 8, quietMs: 250 });
  const index = new RunIndex();
  store.observe(index);
  const records = new Map<string, RunRecord>();
  const service = new RunCompareService({ get: async (id) => records.get(id) }, new EmbeddedRunTraces(store, index));
  return { store, index, records, service };
}

test('a latency fault on rag in the second run: rag ranks first, its own time moved by about the fault', async () => {
  const { store, records, service } = setup();
  store.add(runTraces('base-1', 1, 150, T0));
  store.add(runTraces('slow-2', 2, 150, T0 + 60_000, { hop: 'rag', kind: 'latency', magnitude: 250 }));
  records.set('base-1', record('base-1', T0, T0 + 8000, 900));
  records.set('slow-2', record('slow-2', T0 + 60_000, T0 + 68_000, 1200));

  const a = RunCompareAnswer.parse(await service.compare('slow-2', 'base-1'));
  assert.equal(a.candidates[0]?.service, 'rag', a.candidates.map((c) => `${c.service} ${c.score}`).join(', '));
  assert.deepEqual(a.traces, { run: 150, baseline: 150, source: 'embedded', sampled: false });
  const top = a.hops[0];
  assert.equal(top.service, 'rag', JSON.stringify(a.hops.slice(0, 3)));
  assert.ok(top.deltaP50Ms! > 200 && top.deltaP50Ms! < 300, `rag P50 delta ${top.deltaP50Ms}`);
  assert.ok(top.runCount > 0 && top.baselineCount > 0);
  // The other hops did not change: their own time is within a few ms of the baseline run's.
  for (const h of a.hops.filter((x) => x.service !== 'rag' && x.deltaP50Ms !== null && x.runCount >= 100)) {
    assert.ok(Math.abs(h.deltaP50Ms!) < 20, `${h.service} ${h.operation} moved ${h.deltaP50Ms}`);
  }
  const ev = a.candidates[0].evidence.find((e) => e.summary.startsWith('against baseline run base-1'));
  assert.ok(ev, JSON.stringify(a.candidates[0].evidence));
  assert.equal(ev.kind, 'self_time');
  assert.deepEqual(a.client, {
    run: { e2eP99Ms: 1200, ttftP99Ms: 600, errorRate: 0 },
    baseline: { e2eP99Ms: 900, ttftP99Ms: 450, errorRate: 0 },
  });

  // The other way round nothing got slower at rag: it is not the top slow-down.
  const back = await service.compare('base-1', 'slow-2');
  const ragBack = back.hops.filter((h) => h.service === 'rag' && h.deltaP50Ms !== null).map((h) => h.deltaP50Ms!);
  assert.ok(Math.min(...ragBack) < -200, `rag deltas the other way: ${ragBack.join(', ')}`);
});

test('unknown run, unknown baseline, and a run compared with itself are refused with a clear message', async () => {
  const { records, service } = setup();
  records.set('a', record('a', T0, T0 + 1000, 1));
  await assert.rejects(
    service.compare('nope', 'a'),
    (e: DomainError) => e.kind === 'not_found' && /unknown run nope/.test(e.message)
  );
  await assert.rejects(
    service.compare('a', 'gone'),
    (e: DomainError) => e.kind === 'not_found' && /unknown baseline run gone/.test(e.message)
  );
  await assert.rejects(
    service.compare('a', 'a'),
    (e: DomainError) => e.kind === 'invalid' && /with itself/.test(e.message)
  );
});

test('a run without traces is an answer that says so, not an error', async () => {
  const { store, records, service } = setup();
  store.add(runTraces('with', 3, 20, T0));
  records.set('with', record('with', T0, T0 + 1000, 1));
  records.set('without', record('without', T0 + 5000, T0 + 6000, 1));
  const a = RunCompareAnswer.parse(await service.compare('without', 'with'));
  assert.equal(a.traces.run, 0);
  assert.equal(a.traces.baseline, 20);
  assert.deepEqual(a.candidates, []);
  assert.ok(
    a.missing.some((m) => m.startsWith('run without: no traces with hopscope.run_id=without')),
    a.missing.join(' | ')
  );
  assert.ok(a.hops.every((h) => h.runCount === 0 && h.deltaP50Ms === null));
  // A baseline without traces: the run is ranked against its own medians, and the answer says so.
  const b = RunCompareAnswer.parse(await service.compare('with', 'without'));
  assert.ok(b.missing.some((m) => m.startsWith('baseline run without: no traces')));
  assert.ok(b.missing.some((m) => m.startsWith('baseline: none given')));
});

test('the run index follows the store: evicted traces leave their run', () => {
  const { store, index } = setup({ maxSpans: 400, maxBytes: 4 * 1024 ** 3, maxAgeMs: 3600_000 });
  store.add(runTraces('r1', 4, 10, T0));
  const before = index.traceIds('r1').length;
  assert.equal(before, 10);
  store.add(runTraces('r2', 5, 30, T0 + 1000));
  const kept = new Set(store.search({ limit: 1000 }).map((t) => t.traceId));
  assert.ok(index.traceIds('r1').length < before, 'r1 lost traces to eviction');
  for (const id of [...index.traceIds('r1'), ...index.traceIds('r2')])
    assert.ok(kept.has(id), `${id} indexed but not in the store`);
  assert.equal(index.size.traces, kept.size);
  // Spans without a run id are not indexed.
  store.add(runTraces('r3', 6, 1, T0).map((s) => ({ ...s, attributes: {} })));
  assert.equal(index.traceIds('r3').length, 0);
});

test('a run with more traces than the bound is read as an even sample, and says so', async () => {
  const { store, records } = setup();
  const index = new RunIndex();
  store.observe(index);
  store.add(runTraces('big', 7, 60, T0));
  store.add(runTraces('small', 8, 20, T0 + 10_000));
  records.set('big', record('big', T0, T0 + 3000, 1));
  records.set('small', record('small', T0 + 10_000, T0 + 11_000, 1));
  const service = new RunCompareService(
    { get: async (id) => records.get(id) },
    new EmbeddedRunTraces(store, index),
    25
  );
  const a = await service.compare('big', 'small');
  assert.equal(a.traces.run, 25);
  assert.equal(a.traces.sampled, true);
  assert.ok(a.missing.some((m) => m.includes('25 of its 60 traces')));
});

test("a settled run pair is answered from the cache until the runs' traces change", async () => {
  const { store, records, service } = setup();
  store.add(runTraces('c1', 9, 40, T0));
  store.add(runTraces('c2', 10, 40, T0 + 10_000, { hop: 'embedding', kind: 'latency', magnitude: 200 }));
  records.set('c1', record('c1', T0, T0 + 2000, 1));
  records.set('c2', record('c2', T0 + 10_000, T0 + 12_000, 1));
  const first = await service.compare('c2', 'c1');
  const again = await service.compare('c2', 'c1');
  assert.deepEqual({ ...again, tookMs: 0 }, { ...first, tookMs: 0 });
  store.add(runTraces('c2', 11, 10, T0 + 13_000, { hop: 'embedding', kind: 'latency', magnitude: 200 }));
  const later = await service.compare('c2', 'c1');
  assert.equal(later.traces.run, 50);
  assert.equal(later.candidates[0].service, 'embedding');
});
