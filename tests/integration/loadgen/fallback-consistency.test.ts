/**
 * Fall-back consistency on the real chain (issue 21, item 4): the chain in split mode (one process per pod), the real
 * proxy on an embedded PGlite data dir, and the real `hopscope-load` CLI (`main()`) running chaos-gpu-oom's graded
 * prompts (data/gpu-oom-answers.jsonl: agent tasks expected to complete, RAG questions with their documents) with
 * gpu_oom on llm-tgi mid-run. Every answer is counted on its model path by the response model the chain reported; the
 * fall-back path (hopscope-llama-1b) completes fewer agent tasks than the primary; the gate
 * `--max-regression 'fallback_completion:-10%'` fails the run with the figure; the proxy's record carries the same.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FallbackSummary, HOPS, pathTotals, RunRecord } from '../../../contract';
import type { RunningProxy } from '../../../backend-proxy/src/server';
import { main } from '../../../loadgen/src/cli';
import type { RunningChain } from '../../../loadgen/src/chain/start';
import { startTestStack, type TestStack } from '../../support/stack';

const DATASET = join(import.meta.dirname, '../../../loadgen/scenarios/data/gpu-oom-answers.jsonl');
// On from 2 s to the end: every TGI request from then on falls back, and the sequential dataset (21 lines, backends
// alternating) brings 10 of its 11 agent tasks to TGI in the 8 s left (at 4 req/s).
const FAULT_AT_S = 2;

describe('fall-back consistency: gpu_oom on the primary path, answers graded per model path', () => {
  let stack: TestStack;
  let chain: RunningChain;
  let proxy: RunningProxy;
  let dir: string;

  before(async () => {
    stack = await startTestStack({
      tmpPrefix: 'fallback-',
      split: {
        // Each replica process compiles the chain before it is ready: minutes on a machine shared by many test runs.
        readyTimeoutMs: 300_000,
      },
      chain: {
        timeScale: 0.05,
        vectorCacheHitRate: 0,
        samplerAdaptive: false,
        // One pod per hop: nine processes are enough for two backends, and start in time on a busy machine.
        replicas: Object.fromEntries(HOPS.map((h) => [h, 1])) as Record<(typeof HOPS)[number], number>,
      },
      proxy: (s) => ({ chainControlUrl: s.chain.controlUrl, alertIntervalMs: 0, dataDir: join(s.dir, 'data') }),
      prometheus: false,
    });
    ({ chain, proxy, dir } = stack);
  });
  after(async () => {
    await stack?.close();
  });

  it('counts every answer on its path, grades each path, and the gate fails on the fall-back path with the figure', async () => {
    const scenario = join(dir, 'chaos-graded.yaml');
    writeFileSync(
      scenario,
      [
        'description: chaos-gpu-oom, short',
        'target: { backend: mix }',
        `prompts: { kind: dataset, file: ${DATASET}, order: sequential }`,
        'request: { maxTokens: 12, timeout: 20s }',
        'load: { rps: 4, duration: 10s, arrivals: uniform }',
        'faults:',
        `  - { at: ${FAULT_AT_S}s, target: llm-tgi, kind: gpu_oom, magnitude: 1 }`,
      ].join('\n')
    );
    const out = join(dir, 'run.json');
    let err = '';
    const code = await main(
      [
        '--scenario',
        scenario,
        '--target',
        chain.gatewayUrl,
        '--control',
        chain.controlUrl,
        '--run-id',
        'fallback-1',
        '--report',
        proxy.url,
        '--metrics',
        'none',
        '--quiet',
        '--spool-dir',
        join(dir, 'spool'),
        '--max-regression',
        'fallback_completion:-10%',
        '--json',
        out,
      ],
      (s) => {
        err += s;
      },
      (s) => {
        err += s;
      },
      { env: {} }
    );
    const sum = JSON.parse(readFileSync(out, 'utf8'));
    const seen = `exit ${code}, sent ${sum.sent}, degraded ${sum.degraded}, errors ${JSON.stringify(sum.errors)}, fallback ${JSON.stringify(sum.fallback?.paths)}\n${err}`;
    assert.ok(sum.fallback, seen);
    const f = FallbackSummary.parse(sum.fallback);
    const fb = pathTotals(f, 'fallback');
    const pr = pathTotals(f, 'primary');

    // Every request counted once: served on a path or failed, in the buckets and in the paths alike.
    assert.equal(pr.served + fb.served, sum.succeeded + sum.degraded, 'every served answer is on one path');
    assert.equal(fb.served, sum.degraded, 'the fall-back path is exactly the degraded answers');
    const inBuckets = f.buckets.reduce((a, b) => ({ p: a.p + b.primary, f: a.f + b.fallback, x: a.x + b.failed }), {
      p: 0,
      f: 0,
      x: 0,
    });
    assert.deepEqual(inBuckets, { p: pr.served, f: fb.served, x: sum.errors.total });
    assert.equal(f.unknown, 0, 'the chain says which model answered every time');

    // The fall-back path is the light model, served only while the fault was on.
    assert.deepEqual(fb.models, ['hopscope-llama-1b']);
    assert.ok(fb.served >= 8, seen);
    const [fault] = sum.faults;
    assert.ok(fault.id && fault.startMs, `applied: ${JSON.stringify(fault)}`);
    // Buckets are by send time: a request sent before the fault can still reach the LLM after it (queued on a busy
    // machine) and fall back. None sent longer before the fault than the run's slowest request took can have.
    const inFlight = Math.max(1000, sum.latencyMs.max);
    for (const b of f.buckets)
      if (b.startMs + f.bucketS * 1000 < fault.startMs - inFlight)
        assert.equal(b.fallback, 0, `nothing fell back in the bucket at ${b.startMs}, before the fault: ${seen}`);
    assert.ok(
      f.buckets.some((b) => b.startMs >= fault.startMs - 1000 && b.fallback > 0),
      'the fall-back rate rises once the fault is on'
    );

    // Graded per path: agent tasks and RAG answers on both (the gateway alternates vLLM and TGI). How many depends on
    // how many a busy machine answered in time; what is asserted is that each is counted and judged as counted.
    assert.ok(pr.tasks.n >= 1 && fb.tasks.n >= 1, seen);
    assert.ok(
      pr.recall.n > 0 && fb.recall.n > 0,
      `RAG answers graded against their expected documents on both: ${seen}`
    );
    const primaryRate = pr.tasks.completed / pr.tasks.n;
    const lightRate = fb.tasks.completed / fb.tasks.n;

    // The gate: its verdict is the counts' (exit 1 below 90 % of the primary's), with the figure and its counts.
    const [gate] = sum.regressions;
    assert.deepEqual(
      [gate.metric, gate.versus, gate.baseline],
      ['fallback_completion', 'primary_path', Number(primaryRate.toPrecision(6))]
    );
    assert.equal(gate.pass, primaryRate - lightRate <= 0.1 * primaryRate + 1e-9, seen);
    assert.equal(code, gate.pass ? 0 : 1, seen);
    if (!gate.pass)
      assert.match(
        err,
        new RegExp(
          `fall-back gate failed: .*it completes ${Math.round(lightRate * 100)} % of agent tasks \\(${fb.tasks.completed} of ${fb.tasks.n}\\) vs ${Math.round(primaryRate * 100)} % \\(${pr.tasks.completed} of ${pr.tasks.n}\\) on the primary path`
        )
      );
    assert.match(err, /fallback path hopscope-llama-1b +served \d+, agent tasks/);

    // The proxy's record: the same tally, the same verdict.
    const rec = RunRecord.parse(await (await fetch(`${proxy.url}/api/runs/fallback-1`)).json());
    assert.equal(rec.status, gate.pass ? 'passed' : 'failed');
    assert.deepEqual(rec.summary?.fallback, f);
    assert.equal(rec.regressions[0].versus, 'primary_path');
  });
});
