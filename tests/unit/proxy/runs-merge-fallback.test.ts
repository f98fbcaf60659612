/**
 * The proxy's merge of a distributed run (issue 21, item 4): the workers' per-path tallies add exactly, re-bucketed to
 * the widest width, and the within-run gate `fallback_completion` shows the merged paths' figures, failing when any
 * worker failed it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientSummary, FallbackSummary, RunRecord, type RegressionVerdict, type RunFinish } from '../../../contract';
import { mergeRun, type WorkerResult } from '../../../backend-proxy/src/runs/merge';
import { latencies, summary as fixtureSummary } from '../../integration/db/run-fixtures';

const T0 = 1_800_000_000_000;

function fallback(primary: [number, number], light: [number, number], bucketS: number): FallbackSummary {
  const path = (p: 'primary' | 'fallback', model: string, [done, n]: [number, number]) => ({
    path: p,
    model,
    served: n,
    tasks: { n, completed: done },
    recall: { n: 0, sum: 0 },
  });
  return {
    bucketS,
    paths: [path('primary', 'hopscope-llama-8b-v1', primary), path('fallback', 'hopscope-llama-1b', light)],
    buckets: [{ startMs: T0 + 10_000, primary: primary[1], fallback: light[1], failed: 0 }],
    unknown: 0,
  };
}

function worker(id: string, f: FallbackSummary, gate: RegressionVerdict): WorkerResult {
  const summary = ClientSummary.parse({ ...fixtureSummary(latencies(100, 200)), fallback: f });
  const finish: RunFinish = {
    workerId: id,
    endMs: T0 + 60_000,
    status: gate.pass ? 'passed' : 'failed',
    summary,
    thresholds: [],
    regressions: [gate],
    faults: [],
    slowest: [],
    failed: [],
  };
  return {
    workerId: id,
    status: finish.status,
    startMs: T0,
    lastHeartbeatMs: T0,
    abortReason: null,
    plannedFaults: [],
    finish,
  };
}

const verdict = (primary: number, light: number, pass: boolean): RegressionVerdict => ({
  metric: 'fallback_completion',
  allowed: '-10%',
  baseline: primary,
  actual: light,
  delta: light - primary,
  deltaRatio: (light - primary) / primary,
  pass,
  versus: 'primary_path',
});

test("two workers' paths add exactly, and the within-run gate shows the merged figures", () => {
  // Worker a: 45/50 vs 9/10 (passes alone); worker b: 40/40 vs 2/10 (fails alone).
  const a = worker('a', fallback([45, 50], [9, 10], 1), verdict(0.9, 0.9, true));
  const b = worker('b', fallback([40, 40], [2, 10], 5), verdict(1, 0.2, false));
  const m = mergeRun([a, b]);
  const f = FallbackSummary.parse(m.summary!.fallback);
  assert.equal(f.bucketS, 5);
  assert.deepEqual(
    f.paths.map((p) => [p.path, p.served, p.tasks.completed, p.tasks.n]),
    [
      ['fallback', 20, 11, 20],
      ['primary', 90, 85, 90],
    ]
  );
  assert.deepEqual(f.buckets, [{ startMs: T0 + 10_000, primary: 90, fallback: 20, failed: 0 }]);
  const [gate] = m.regressions;
  assert.equal(gate.versus, 'primary_path');
  assert.equal(gate.baseline, Number((85 / 90).toFixed(4)));
  assert.equal(gate.actual, 0.55);
  assert.equal(gate.pass, false, 'a worker failed it');
  assert.equal(m.status, 'failed');
  // The record the proxy serves carries it.
  RunRecord.shape.summary.parse(m.summary);
});
