/**
 * Fall-back consistency (issue 21, item 4): answers graded per model path by the response model the chain reports,
 * counted from every request (the run's tally), per time bucket of their send time; the within-run gate
 * `fallback_completion:-10%` and the figure it prints.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fallbackBucketS,
  fallbackSentence,
  FallbackSummary,
  judgeFallbackCompletion,
  mergeFallback,
  thresholdValue,
} from '../../../contract';
import { ClientSummary } from '../../../contract/runs';
import { parseCli, type CliPlan } from '../../../loadgen/src/cli';
import { gradeAnswer } from '../../../loadgen/src/load/answer';
import { loadScenario } from '../../../loadgen/src/load/scenario';
import { FallbackTally } from '../../../loadgen/src/load/fallback';
import type { PlannedRequest } from '../../../loadgen/src/load/mix';
import { describeRegression, judgeRegressions, parseMaxRegression } from '../../../loadgen/src/load/regression';
import type { Outcome } from '../../../loadgen/src/load/request';
import { Tally } from '../../../loadgen/src/load/tally';

const T0 = 1_800_000_000_000;
const PRIMARY = 'hopscope-llama-8b-v1';
const LIGHT = 'hopscope-llama-1b';

type Kind = 'ok' | 'degraded' | 'error';
/** A finished request as the driver hands it to the tally. */
function outcome(kind: Kind, o: { task?: 'completed' | 'failed'; recall?: number; model?: string } = {}): Outcome {
  return {
    outcome: kind,
    latencyMs: 100,
    tokens: 4,
    itl: [],
    key: `tgi/${PRIMARY}/agent`,
    traceId: null,
    traceIdSource: 'none',
    sampled: false,
    answered: true,
    ...(kind === 'error' ? { kind: 'http_503' } : { responseModel: o.model ?? (kind === 'ok' ? PRIMARY : LIGHT) }),
    ...(o.task ? { agentTask: o.task } : {}),
    ...(o.recall !== undefined ? { recall: o.recall } : {}),
  };
}

describe('grading an answer', () => {
  it('keys it by the response model the chain reports: the asked one is the primary path, another the fall-back', () => {
    const info = { route: 'agent' as const, requestedModel: PRIMARY, documents: [] };
    const primary = gradeAnswer(
      { ...info, responseModel: PRIMARY, agent: { task: 'completed', toolCalls: 1, steps: 3 } },
      undefined
    );
    assert.deepEqual(
      { degraded: primary.degraded, model: primary.responseModel, task: primary.agentTask },
      { degraded: false, model: PRIMARY, task: 'completed' }
    );
    const light = gradeAnswer(
      { ...info, responseModel: LIGHT, agent: { task: 'failed', toolCalls: 0, steps: 2 } },
      {
        task: 'completed',
      }
    );
    assert.deepEqual(
      { degraded: light.degraded, model: light.responseModel, task: light.agentTask, detail: light.detail },
      { degraded: true, model: LIGHT, task: 'failed', detail: `fallback:${PRIMARY}→${LIGHT}` }
    );
    assert.equal(gradeAnswer(undefined, undefined).responseModel, undefined, 'a real server says nothing: no path');
  });
});

describe('the fall-back tally', () => {
  it('counts every request on its path and model, its graded answer, and its bucket by send time', () => {
    const t = new FallbackTally(1);
    const at = (s: number): number => T0 + s * 1000;
    // Second 0: primary only; second 1: half fall back; second 3: a failure and a fall-back (second 2 is empty).
    t.record(outcome('ok', { task: 'completed' }), at(0.1));
    t.record(outcome('ok', { recall: 0.75 }), at(0.9));
    t.record(outcome('ok', { task: 'completed', model: 'hopscope-llama-8b-v2' }), at(1.2));
    t.record(outcome('degraded', { task: 'failed' }), at(1.5));
    t.record(outcome('degraded', { task: 'completed', recall: 0.5 }), at(3.0));
    t.record(outcome('error'), at(3.5));
    t.record({ outcome: 'ok' }, at(3.6)); // no answer info (a real server)
    const r = FallbackSummary.parse(t.result());
    assert.deepEqual(r.paths, [
      { path: 'fallback', model: LIGHT, served: 2, tasks: { n: 2, completed: 1 }, recall: { n: 1, sum: 0.5 } },
      { path: 'primary', model: PRIMARY, served: 2, tasks: { n: 1, completed: 1 }, recall: { n: 1, sum: 0.75 } },
      {
        path: 'primary',
        model: 'hopscope-llama-8b-v2',
        served: 1,
        tasks: { n: 1, completed: 1 },
        recall: { n: 0, sum: 0 },
      },
    ]);
    assert.deepEqual(
      r.buckets.map((b) => [(b.startMs - T0) / 1000, b.primary, b.fallback, b.failed]),
      [
        [0, 2, 0, 0],
        [1, 1, 1, 0],
        [2, 0, 0, 0],
        [3, 0, 1, 1],
      ]
    );
    assert.equal(r.unknown, 1);
  });

  it('picks a bucket width from the ladder so a run has at most ~120 buckets', () => {
    assert.equal(fallbackBucketS(8), 1);
    assert.equal(fallbackBucketS(60), 1);
    assert.equal(fallbackBucketS(121), 5);
    assert.equal(fallbackBucketS(3600), 30);
    assert.equal(fallbackBucketS(7 * 24 * 3600), 3600);
  });

  it("is part of the run's summary, from every request the tally records (interrupted ones excepted)", () => {
    const profile = { kind: 'constant' as const, rps: 10, durationS: 30, arrivals: 'uniform' as const };
    const tally = new Tally({}, 10, 1, profile);
    const p: PlannedRequest = { model: PRIMARY, route: 'agent', backend: 'tgi', messages: [] };
    const sends: Array<[Outcome, number]> = [];
    for (let i = 0; i < 40; i++)
      sends.push([
        i % 4 === 0
          ? outcome('degraded', { task: i % 8 === 0 ? 'failed' : 'completed' })
          : outcome('ok', { task: 'completed' }),
        T0 + i * 250,
      ]);
    for (const [o, s] of sends) {
      tally.send(0, 0);
      tally.record(o, p, s, performance.now());
    }
    tally.send(0, 0);
    tally.record({ ...outcome('ok'), outcome: 'interrupted' }, p, T0, performance.now());
    const sum = tally.summary({
      runId: 'r',
      url: new URL('http://127.0.0.1:1/'),
      profile,
      stream: false,
      traceparent: false,
      maxInFlight: 10,
      durationS: 30,
      wallS: 10,
      scheduleEndS: 30,
    });
    const f = FallbackSummary.parse(sum.fallback);
    const served = (path: string) => f.paths.filter((x) => x.path === path).reduce((a, x) => a + x.served, 0);
    assert.equal(served('fallback'), 10);
    assert.equal(served('primary'), 30);
    assert.equal(served('fallback') + served('primary'), sum.succeeded + sum.degraded, 'every served request, once');
    assert.equal(sum.degraded, 10);
    assert.equal(f.buckets.length, 10, '40 sends 250 ms apart: ten 1-s buckets');
    assert.ok(f.buckets.every((b) => b.primary === 3 && b.fallback === 1));
    // 10 fall-back tasks, the 5 at i % 8 == 0 failed: 50 % vs 100 %.
    assert.equal(thresholdValue(ClientSummary.parse(sum), 'fallback_completion'), 0.5);
  });
});

/** A summary around a fall-back tally (the figures the gate reads). */
function summaryWith(fallback?: FallbackSummary): ClientSummary {
  const lat = { count: 1, mean: 1, p50: 1, p90: 1, p95: 1, p99: 1, max: 1 };
  return ClientSummary.parse({
    durationS: 60,
    sent: 100,
    completed: 100,
    succeeded: 100,
    errors: { total: 0, byKind: {} },
    timeouts: 0,
    droppedClientSide: 0,
    rps: { targetMean: 1, sent: 1, completed: 1 },
    latencyMs: lat,
    ttftMs: lat,
    itlMs: lat,
    tpotMs: lat,
    outputTokens: 0,
    outputTokensPerS: 0,
    goodput: { good: 100, rps: 1, ratio: 1 },
    schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 1 },
    ...(fallback ? { fallback } : {}),
  });
}

/** Primary and fall-back paths with their agent-task counts. */
function paths(primary: [number, number], light: [number, number] | null, bucketS = 1): FallbackSummary {
  return {
    bucketS,
    paths: [
      {
        path: 'primary',
        model: PRIMARY,
        served: primary[1],
        tasks: { n: primary[1], completed: primary[0] },
        recall: { n: 0, sum: 0 },
      },
      ...(light
        ? [
            {
              path: 'fallback' as const,
              model: LIGHT,
              served: light[1],
              tasks: { n: light[1], completed: light[0] },
              recall: { n: 0, sum: 0 },
            },
          ]
        : []),
    ],
    buckets: [],
    unknown: 0,
  };
}

describe('fallback_completion: the gate within the run', () => {
  const rules = parseMaxRegression('fallback_completion:-10%');

  it('fails when the fall-back path completes more than 10 % fewer agent tasks than the primary, with the figure', () => {
    const run = summaryWith(paths([46, 50], [11, 18]));
    const [v] = judgeRegressions(rules, undefined, run);
    assert.equal(v.versus, 'primary_path');
    assert.equal(v.pass, false);
    assert.equal(v.baseline, 0.92);
    assert.equal(v.actual, Number((11 / 18).toPrecision(6)));
    assert.match(
      describeRegression(v),
      /^fallback_completion 0\.611111 on the fall-back path, 33\.6% below the primary path's 0\.92, allowed -10%: REGRESSED$/
    );
    assert.equal(
      fallbackSentence(run.fallback),
      `18 of 68 served answers (26 %) came from the fall-back path (${LIGHT}): it completes 61 % of agent tasks (11 of 18) vs 92 % (46 of 50) on the primary path.`
    );
  });

  it('passes within the allowed fall, and is not judged when nothing fell back or a path had no agent task', () => {
    assert.equal(judgeRegressions(rules, undefined, summaryWith(paths([50, 50], [17, 18])))[0].pass, true);
    const none = judgeRegressions(rules, undefined, summaryWith(paths([46, 50], null)))[0];
    assert.deepEqual([none.pass, none.actual], [true, null]);
    assert.match(describeRegression(none), /not judged, no agent task was answered on the fall-back path/);
    assert.equal(judgeRegressions(rules, undefined, summaryWith())[0].pass, true, 'no tally (a real server)');
    assert.equal(fallbackSentence(paths([46, 50], null)), null);
    assert.equal(
      judgeFallbackCompletion({ direction: '-', amount: 0.05, relative: false }, paths([9, 10], [8, 10])).pass,
      false
    );
  });

  it('is judged within the run even beside a baseline run, whose other rules it leaves as they were', () => {
    const both = parseMaxRegression('p99_ms:+10%,fallback_completion:-10%');
    const run = summaryWith(paths([46, 50], [11, 18]));
    const withBaseline = judgeRegressions(both, summaryWith(paths([50, 50], null)), run);
    assert.deepEqual(
      withBaseline.map((v) => [v.metric, v.versus ?? 'baseline_run', v.baseline]),
      [
        ['p99_ms', 'baseline_run', 1],
        ['fallback_completion', 'primary_path', 0.92],
      ]
    );
    // No baseline run: only the within-run rule is judged.
    assert.deepEqual(
      judgeRegressions(both, undefined, run).map((v) => v.metric),
      ['fallback_completion']
    );
  });
});

describe("merging workers' tallies", () => {
  it('adds counts per path and model and re-buckets to the widest width', () => {
    const a: FallbackSummary = {
      ...paths([10, 10], [3, 5], 1),
      buckets: [0, 1, 2, 3, 4, 5].map((s) => ({
        startMs: T0 + s * 1000,
        primary: 2,
        fallback: s === 5 ? 5 : 0,
        failed: 0,
      })),
    };
    const b: FallbackSummary = {
      ...paths([20, 21], [1, 4], 5),
      buckets: [{ startMs: T0 + 5000, primary: 21, fallback: 4, failed: 2 }],
      unknown: 3,
    };
    const m = FallbackSummary.parse(mergeFallback([a, b]));
    assert.equal(m.bucketS, 5);
    assert.deepEqual(
      m.paths.map((p) => [p.path, p.served, p.tasks.completed, p.tasks.n]),
      [
        ['fallback', 9, 4, 9],
        ['primary', 31, 30, 31],
      ]
    );
    assert.deepEqual(
      m.buckets.map((x) => [(x.startMs - T0) / 1000, x.primary, x.fallback, x.failed]),
      [
        [0, 10, 0, 0],
        [5, 23, 9, 2],
      ]
    );
    assert.equal(m.unknown, 3);
    assert.equal(mergeFallback([a]), a);
    assert.equal(mergeFallback([]), undefined);
  });
});

describe('the gate on the command line and the shipped chaos scenario', () => {
  const plan = (argv: string[]): CliPlan => parseCli([...argv, '--report', 'none', '--metrics', 'none'], {}) as CliPlan;

  it('--max-regression fallback_completion needs no baseline run; a cross-run rule still does', () => {
    const p = plan(['--scenario', 'chaos-gpu-oom', '--max-regression', 'fallback_completion:-10%']);
    assert.deepEqual(p.baseline, { rules: parseMaxRegression('fallback_completion:-10%') });
    assert.throws(
      () => plan(['--max-regression', 'fallback_completion:-10%,p99_ms:+10%']),
      /needs --baseline-run ID\|FILE \(only fallback_completion is judged within the run\)/
    );
    const b = plan(['--max-regression', 'fallback_completion:-10%,p99_ms:+10%', '--baseline-run', 'r1']);
    assert.equal(b.baseline?.ref, 'r1');
  });

  it('chaos-gpu-oom states what a correct answer is: agent tasks to complete and RAG documents to retrieve', () => {
    const { scenario: s } = loadScenario('chaos-gpu-oom', {});
    assert.equal(s.prompts.kind, 'dataset');
    const prompts = plan(['--scenario', 'chaos-gpu-oom']).load.prompts;
    assert.ok(prompts?.kind === 'dataset');
    const lines = prompts.lines;
    const agent = lines.filter((l) => l.route === 'agent');
    const rag = lines.filter((l) => l.route === 'rag');
    assert.ok(
      agent.length >= 10 && agent.every((l) => l.expected?.task === 'completed'),
      `${agent.length} agent tasks`
    );
    assert.ok(rag.length >= 10 && rag.every((l) => (l.expected?.documents?.length ?? 0) > 0));
    assert.equal(lines.length % 2, 1, 'an odd count: with the backends alternating, every line meets both');
  });
});
