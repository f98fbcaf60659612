/** The latency sketch (contract/sketch.ts) and the pure merge of a distributed run's workers (runs/merge.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClientSummary,
  LatencySketch,
  emptySketch,
  mergeSketches,
  sketchAdd,
  sketchQuantile,
  sketchSummary,
  type ClientSummary as ClientSummaryT,
  type RunFinish,
  type RunRequest,
} from '../../../contract';
import { seededRandom as rng } from '../../../loadgen/src/shared/random';
import {
  listFigures,
  mergeRun,
  mergeSummaries,
  metricValue,
  runStatus,
  type WorkerResult,
} from '../../../backend-proxy/src/runs/merge';

/** Latency-like values: log-normal around `medianMs`. */
function latencies(n: number, seed: number, medianMs: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const z = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    return medianMs * Math.exp(0.6 * z);
  });
}

const nearestRank = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};

const sketchOf = (xs: number[], alpha?: number, minMs?: number): LatencySketch => {
  const s = emptySketch(alpha, minMs);
  for (const x of xs) sketchAdd(s, x);
  return s;
};

test('sketch quantiles are within alpha of the exact nearest-rank quantiles, and the sketch is a valid contract value', () => {
  const xs = latencies(20_000, 1, 300);
  const s = sketchOf(xs);
  assert.equal(LatencySketch.safeParse(s).success, true);
  for (const q of [0.01, 0.5, 0.9, 0.95, 0.99, 0.999]) {
    const exact = nearestRank(xs, q);
    const approx = sketchQuantile(s, q)!;
    assert.ok(Math.abs(approx - exact) / exact <= s.alpha + 1e-9, `q=${q}: ${approx} vs exact ${exact}`);
  }
  assert.equal(s.count, xs.length);
  assert.equal(s.max, Math.max(...xs));
  assert.ok(Math.abs(s.sum - xs.reduce((a, b) => a + b, 0)) < 1e-6 * s.sum);
});

test('merging sketches equals sketching the union; different parameters still land within both alphas', () => {
  const a = latencies(5000, 2, 200);
  const b = latencies(7000, 3, 800);
  const merged = mergeSketches(sketchOf(a), sketchOf(b));
  const union = sketchOf([...a, ...b]);
  assert.deepEqual(merged.buckets, union.buckets);
  assert.equal(merged.count, union.count);
  assert.equal(merged.max, union.max);
  assert.equal(sketchQuantile(merged, 0.99), sketchQuantile(union, 0.99));

  const coarse = sketchOf(b, 0.05, 0.01);
  const mixed = mergeSketches(sketchOf(a), coarse);
  const exact = nearestRank([...a, ...b], 0.99);
  assert.equal(mixed.count, a.length + b.length);
  assert.ok(Math.abs(sketchQuantile(mixed, 0.99)! - exact) / exact <= 0.01 + 0.05 + 1e-9);
});

test('zero values, bad values and empty sketches', () => {
  const s = emptySketch();
  assert.equal(sketchQuantile(s, 0.5), null);
  assert.deepEqual(sketchSummary(s), { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null });
  assert.equal(sketchAdd(s, Number.NaN), false);
  assert.equal(sketchAdd(s, -1), false);
  assert.equal(s.count, 0);
  sketchAdd(s, 0, 3);
  sketchAdd(s, 100);
  assert.equal(s.zeroCount, 3);
  assert.equal(sketchQuantile(s, 0.5), 0);
  assert.ok(Math.abs(sketchQuantile(s, 1)! - 100) <= 1);
  assert.throws(() => emptySketch(0.5), /alpha/);
});

/** A worker's summary over `e2e` latencies (TTFT = a third of each), with exact percentiles as the load generator gives them. */
function summaryOf(
  e2e: number[],
  o: { sent?: number; errors?: number; withSketch?: boolean; durationS?: number; notes?: string[] } = {}
): ClientSummaryT {
  const exact = (xs: number[]) => ({
    count: xs.length,
    mean: xs.length ? Number((xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3)) : null,
    p50: xs.length ? nearestRank(xs, 0.5) : null,
    p90: xs.length ? nearestRank(xs, 0.9) : null,
    p95: xs.length ? nearestRank(xs, 0.95) : null,
    p99: xs.length ? nearestRank(xs, 0.99) : null,
    max: xs.length ? Math.max(...xs) : null,
  });
  const ttft = e2e.map((x) => x / 3);
  const errors = o.errors ?? 0;
  const sent = o.sent ?? e2e.length + errors;
  const durationS = o.durationS ?? 60;
  return ClientSummary.parse({
    durationS,
    sent,
    completed: e2e.length,
    succeeded: e2e.length,
    degraded: 0,
    errors: { total: errors, byKind: errors ? { http_503: errors } : {} },
    timeouts: 0,
    droppedClientSide: 0,
    rps: { targetMean: sent / durationS, sent: sent / durationS, completed: e2e.length / durationS },
    latencyMs: exact(e2e),
    ttftMs: exact(ttft),
    itlMs: exact(e2e.map((x) => x / 100)),
    tpotMs: exact(e2e.map((x) => x / 50)),
    outputTokens: e2e.length * 10,
    outputTokensPerS: (e2e.length * 10) / durationS,
    goodput: { good: e2e.length, rps: e2e.length / durationS, ratio: sent ? e2e.length / sent : 0 },
    schedule: { lateOver10ms: 1, lateRatio: 1 / sent, lateP99Ms: 5, lateMaxMs: 12 },
    quality: { ragRecall: { mean: 0.8, n: e2e.length }, agentTaskCompletion: { rate: null, n: 0 } },
    untraced: 0,
    ...(o.withSketch === false ? {} : { sketches: { e2e: sketchOf(e2e), ttft: sketchOf(ttft) } }),
    notes: o.notes ?? [],
  });
}

test('one worker: its own summary, exactly', () => {
  const s = summaryOf(latencies(1000, 4, 250));
  const m = mergeSummaries([{ workerId: 'w1', summary: s }]);
  assert.equal(m.percentiles, 'exact');
  assert.deepEqual(m.summary, s);
});

test('several workers: counts and rates add exactly, percentiles come from the merged sketches', () => {
  const a = latencies(3000, 5, 200);
  const b = latencies(2000, 6, 900);
  const sa = summaryOf(a, { errors: 7, notes: ['late start'] });
  const sb = summaryOf(b, { errors: 3, durationS: 61 });
  const m = mergeSummaries([
    { workerId: 'w1', summary: sa },
    { workerId: 'w2', summary: sb },
  ]);
  assert.equal(m.percentiles, 'bucketed');
  assert.equal(ClientSummary.safeParse(m.summary).success, true);
  const s = m.summary;
  assert.equal(s.sent, sa.sent + sb.sent);
  assert.equal(s.completed, a.length + b.length);
  assert.equal(s.errors.total, 10);
  assert.deepEqual(s.errors.byKind, { http_503: 10 });
  assert.equal(s.outputTokens, sa.outputTokens + sb.outputTokens);
  assert.equal(s.durationS, 61);
  assert.ok(Math.abs(s.rps.sent - (sa.rps.sent + sb.rps.sent)) < 1e-3);
  assert.equal(s.goodput.good, a.length + b.length);
  assert.ok(Math.abs(s.goodput.ratio - (a.length + b.length) / s.sent) < 1e-4);
  assert.equal(s.latencyMs.count, a.length + b.length);
  assert.equal(s.latencyMs.max, Math.max(...a, ...b));
  const union = [...a, ...b];
  assert.ok(Math.abs(s.latencyMs.mean! - union.reduce((x, y) => x + y, 0) / union.length) < 0.01);
  for (const [q, got] of [
    [0.5, s.latencyMs.p50],
    [0.99, s.latencyMs.p99],
  ] as const) {
    const exact = nearestRank(union, q);
    assert.ok(Math.abs(got! - exact) / exact <= 0.0101, `p${q * 100}: ${got} vs ${exact}`);
  }
  const ttftExact = nearestRank(
    union.map((x) => x / 3),
    0.99
  );
  assert.ok(Math.abs(s.ttftMs.p99! - ttftExact) / ttftExact <= 0.0101);
  // ITL/TPOT have no sketch: percentiles are not invented.
  assert.equal(s.itlMs.p99, null);
  assert.equal(s.itlMs.count, a.length + b.length);
  assert.ok(s.notes.some((n) => /ITL percentiles cannot be merged/.test(n)));
  assert.ok(s.notes.includes('[w1] late start'));
  assert.equal(s.quality?.ragRecall.mean, 0.8);
  assert.equal(s.sketches?.e2e.count, a.length + b.length);
});

test('a worker without a sketch: percentiles null and the note names it', () => {
  const m = mergeSummaries([
    { workerId: 'w1', summary: summaryOf(latencies(100, 7, 100)) },
    { workerId: 'w2', summary: summaryOf(latencies(100, 8, 100), { withSketch: false }) },
  ]);
  assert.equal(m.summary.latencyMs.p99, null);
  assert.equal(m.summary.latencyMs.count, 200);
  assert.ok(m.notes.some((n) => /end-to-end percentiles are not merged: worker\(s\) w2 sent no sketch/.test(n)));
});

const req = (e2eMs: number, startMs: number, outcome: RunRequest['outcome'] = 'ok'): RunRequest => ({
  traceId: null,
  traceIdSource: 'none',
  startMs,
  e2eMs,
  ttftMs: null,
  outcome,
});

function worker(
  id: string,
  status: WorkerResult['status'],
  finish?: Partial<RunFinish>,
  summary?: ClientSummaryT
): WorkerResult {
  return {
    workerId: id,
    status,
    startMs: 1000,
    lastHeartbeatMs: 5000,
    abortReason: status === 'aborted' && !finish ? `no heartbeat from worker ${id}` : null,
    plannedFaults: [{ atS: 10, target: 'rag', kind: 'latency', magnitude: 400 }],
    finish: finish
      ? {
          workerId: id,
          endMs: 9000,
          status: status as RunFinish['status'],
          summary: summary ?? summaryOf([100, 200]),
          thresholds: [],
          regressions: [],
          faults: [],
          slowest: [],
          failed: [],
          ...finish,
        }
      : null,
  };
}

test('run status: failed if any worker failed, aborted if any was aborted, else passed; running while any runs', () => {
  assert.equal(runStatus([{ status: 'passed' }, { status: 'running' }]), 'running');
  assert.equal(runStatus([{ status: 'passed' }, { status: 'failed' }, { status: 'aborted' }]), 'failed');
  assert.equal(runStatus([{ status: 'passed' }, { status: 'aborted' }]), 'aborted');
  assert.equal(runStatus([{ status: 'aborted' }, { status: 'aborted' }]), 'aborted');
  assert.equal(runStatus([{ status: 'passed' }, { status: 'passed' }]), 'passed');
});

test('mergeRun: verdicts need every worker, requests are the slowest and first failed of all, faults once, reasons kept', () => {
  const slowA = Array.from({ length: 100 }, (_, i) => req(1000 + i, i));
  const slowB = Array.from({ length: 100 }, (_, i) => req(1050 + i, 500 + i));
  const failedB = Array.from({ length: 60 }, (_, i) => req(10, 2000 - i, 'error'));
  const failedA = Array.from({ length: 60 }, (_, i) => req(10, 3000 + i, 'timeout'));
  const applied = {
    atS: 10,
    target: 'rag' as const,
    kind: 'latency' as const,
    magnitude: 400,
    id: 'f1',
    startMs: 11_000,
  };
  const m = mergeRun([
    worker('w1', 'passed', {
      slowest: slowA,
      failed: failedA,
      faults: [applied],
      thresholds: [{ threshold: 'p99_ms<2000', metric: 'p99_ms', actual: 150, pass: true }],
    }),
    worker('w2', 'failed', {
      slowest: slowB,
      failed: failedB,
      faults: [applied],
      thresholds: [{ threshold: 'p99_ms<2000', metric: 'p99_ms', actual: 2500, pass: false }],
    }),
    worker('w3', 'aborted'),
  ]);
  assert.equal(m.status, 'failed');
  assert.equal(m.endMs, 9000);
  assert.equal(m.merge?.workers, 3);
  assert.match(m.merge!.note, /3 workers, 2 reported/);
  assert.equal(m.thresholds.length, 1);
  assert.equal(m.thresholds[0].pass, false);
  assert.equal(m.thresholds[0].actual, metricValue(m.summary!, 'p99_ms'));
  assert.equal(m.slowest.length, 100);
  assert.equal(m.slowest[0].e2eMs, 1149);
  assert.ok(m.slowest.every((r, i) => i === 0 || m.slowest[i - 1].e2eMs >= r.e2eMs));
  assert.equal(m.failed.length, 100);
  assert.equal(m.failed[0].startMs, 1941);
  assert.deepEqual(m.faults, [applied]);
  assert.match(m.abortReason!, /no heartbeat from worker w3/);
});

test('mergeRun: one worker is its own record (no merge block); nobody reported: no summary, planned faults', () => {
  const s = summaryOf([100, 200, 300]);
  const one = mergeRun([
    worker(
      'w1',
      'passed',
      { thresholds: [{ threshold: 'error_rate<0.01', metric: 'error_rate', actual: 0, pass: true }] },
      s
    ),
  ]);
  assert.equal(one.merge, null);
  assert.deepEqual(one.summary, s);
  assert.equal(one.thresholds[0].actual, 0);
  assert.equal(one.abortReason, null);
  const none = mergeRun([worker('w1', 'aborted'), worker('w2', 'aborted')]);
  assert.equal(none.status, 'aborted');
  assert.equal(none.summary, null);
  assert.equal(none.endMs, 5000);
  assert.equal(none.faults.length, 1);
  assert.deepEqual(listFigures(null).e2eP99Ms, null);
});

test('list figures and metric values read the summary the way the load generator judges thresholds', () => {
  const s = summaryOf(latencies(500, 9, 300), { errors: 5 });
  const f = listFigures(s);
  assert.equal(f.e2eP99Ms, s.latencyMs.p99);
  assert.equal(f.ttftP99Ms, s.ttftMs.p99);
  assert.equal(f.errors, 5);
  assert.equal(f.errorRate, 5 / s.sent);
  assert.equal(metricValue(s, 'error_rate'), 5 / s.sent);
  assert.equal(metricValue(s, 'goodput_ratio'), s.goodput.ratio);
  assert.equal(metricValue(s, 'nonsense'), null);
});
