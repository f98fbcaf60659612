/**
 * A run's capacity against the real parts: the simulated chain with one hop constrained, a real Prometheus scraping
 * the chain's hops (their engine metrics) and the run's worker, the real proxy (GET /api/runs/:runId → capacity) and
 * the real `hopscope-load` (a sweep). Asserts the decisions the run record states: the knee, the hop, pod and
 * resource that saturated, a gate failing on the figure, and a run that never saturated saying so.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RunRecord, RunSaturationAnswer } from '../../../contract';
import { DEFAULT_REPLICAS } from '../../../loadgen/src/chain/topology';
import { skipWithoutPrometheus as skip, startRunMetricsStack, type RunMetricsStack } from './run-metrics-stack';

let stack: RunMetricsStack | undefined;

before(async () => {
  if (skip) return;
  stack = await startRunMetricsStack({
    tmpPrefix: `run-capacity-${process.pid}-`,
    // The demo's own durations: an engine step takes ~11 ms, long beside a timer's lateness on a busy machine, and a
    // request of ≤ 16 tokens is a few steps.
    timeScale: 1,
    scrapeChain: true,
    // One vLLM replica that runs one sequence at a time (vLLM's --max-num-seqs 1): ~14 steps of ≥ 11.35 ms a request
    // (a timer never fires early) serve at most ~6 req/s, so its queue saturates it under the sweeps' top rate of 8
    // req/s whatever this machine's load (a starved CPU only lowers the rate it saturates at).
    chain: { replicas: { ...DEFAULT_REPLICAS, 'llm-vllm': 1 }, llmMaxNumSeqs: 1 },
    proxy: (s) => ({
      prometheusUrl: s.promUrl,
      chainControlUrl: s.chain.controlUrl,
      dataDir: join(s.dir, 'data'),
      scrapeIntervalMs: 1000,
    }),
  });
});
after(async () => {
  await stack?.stop();
});

async function promValue(q: string): Promise<number | null> {
  const r = (await (await fetch(`${stack!.promUrl}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as {
    data: { result: Array<{ value: [number, string] }> };
  };
  const v = r.data.result[0]?.value[1];
  return v === undefined ? null : Number(v);
}

/** The replica scraped, and idle (what an earlier saturated run left in it has drained). */
async function waitScraped(): Promise<void> {
  for (const t0 = Date.now(); Date.now() - t0 < 30_000;) {
    if ((await promValue('sum(vllm:num_requests_waiting) + sum(vllm:num_requests_running)')) === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail('the vLLM replica was never scraped idle');
}

const sweepArgs = (rps: number, maxTokens: number, durationS: number, extra: string[] = []): string[] => [
  '--scenario',
  'single-turn-short',
  '--target',
  stack!.chain.gatewayUrl,
  '--control',
  stack!.chain.controlUrl,
  '--backend',
  'vllm',
  '--profile',
  'sweep',
  '--arrivals',
  'uniform',
  '--start-rps',
  '2',
  '--rps',
  String(rps),
  '--max-tokens',
  String(maxTokens),
  // Bounded: what the saturated replica still holds at the end is cut after 8 s.
  '--timeout',
  '8s',
  '--steps',
  '6',
  '--duration',
  `${durationS}s`,
  ...extra,
];

test('a sweep well under the chain’s capacity says there was no knee', { skip, timeout: 90_000 }, async (t) => {
  await waitScraped();
  const run = stack!.load(
    'cap-calm',
    sweepArgs(2, 8, 12).map((a, i, all) => (all[i - 1] === '--start-rps' ? '1' : a))
  );
  // 0, or 1 when the scenario's own latency thresholds fail on a busy machine: the capacity is what is judged here.
  assert.ok([0, 1].includes(await run.code), run.err().slice(-400));
  const rec = RunRecord.parse(await (await fetch(`${stack!.proxy.url}/api/runs/cap-calm`)).json());
  const c = rec.capacity!;
  t.diagnostic(JSON.stringify(c));
  // The chain, the proxy and the load generator share this process: when a loaded machine starves it, its sends leave
  // late and the run must say its figures are a lower bound (the analysis's own check) rather than claim a knee.
  if (c.lowerBound && c.kneeRps !== null) {
    assert.match(c.note ?? '', /a lower bound: the load generator fell behind/);
    return;
  }
  assert.equal(c.kneeRps, null);
  assert.equal(c.bottleneck, null);
  assert.match(c.note ?? '', /no knee up to 2 req\/s/);
});

test(
  'a sweep against one vLLM replica names its queue as the bottleneck, and the gate fails on the figure',
  { skip, timeout: 90_000 },
  async (t) => {
    await waitScraped();
    const run = stack!.load('cap-vllm', sweepArgs(8, 16, 24, ['--min-capacity', '1000']));
    const code = await run.code;
    const sum = run.summary();
    t.diagnostic(
      JSON.stringify({
        capacity: sum.capacity,
        errors: sum.errors,
        steps: sum.steps.map((s: any) => [s.offeredRps, s.achievedRps, s.sloHeld]),
      })
    );
    assert.equal(code, 1, `the capacity gate fails: ${run.err().slice(-400)}`);
    assert.match(run.err(), /capacity gate failed: capacity .*bottleneck: llm-vllm pod llm-vllm-/);
    const rec = RunRecord.parse(await (await fetch(`${stack!.proxy.url}/api/runs/cap-vllm`)).json());
    const c = rec.capacity!;
    assert.ok(c.kneeRps !== null && c.kneeRps < 8, `a knee under the sweep's top rate: ${c.kneeRps}`);
    assert.equal(c.bottleneck?.service, 'llm-vllm');
    assert.match(c.bottleneck!.pod ?? '', /^llm-vllm-/);
    assert.ok(['engine_queue', 'running_limit'].includes(c.bottleneck!.resource), c.bottleneck!.resource);
    assert.match(c.bottleneck!.evidence, /vllm:num_requests_waiting/);
    assert.deepEqual(sum.capacity, c, '--json carries the proxy’s capacity');
    // The run page's per-hop chart reads the signals the verdict used: the replica's queue over the run's window.
    const sat = RunSaturationAnswer.parse(
      await (await fetch(`${stack!.proxy.url}/api/runs/cap-vllm/saturation`)).json()
    );
    assert.deepEqual([sat.from, sat.to], [sum.steps[0].startMs, sum.steps[sum.steps.length - 1].endMs]);
    const queue = sat.signals.find((s) => s.service === 'llm-vllm' && s.resource === 'engine_queue');
    assert.ok(queue, `the vLLM queue among ${sat.signals.map((s) => `${s.service}/${s.resource}`).join(', ')}`);
    assert.equal(queue.pod, c.bottleneck!.pod);
    assert.ok(
      queue.points.some((p) => p[1] >= 1),
      'the queue the verdict saw grow'
    );
  }
);

test(
  'a ramp against one vLLM replica finds the knee in its windows and names the same hop',
  { skip, timeout: 90_000 },
  async (t) => {
    await waitScraped();
    const args = sweepArgs(8, 16, 20).map((a) => (a === 'sweep' ? 'ramp' : a));
    const steps = args.indexOf('--steps');
    args.splice(steps, 2);
    const run = stack!.load('cap-ramp', args);
    await run.code;
    const rec = RunRecord.parse(await (await fetch(`${stack!.proxy.url}/api/runs/cap-ramp`)).json());
    t.diagnostic(JSON.stringify(rec.capacity));
    assert.equal(rec.summary?.steps?.length, 10, 'a ramp is read in 10 windows');
    const c = rec.capacity!;
    assert.ok(c.kneeRps !== null && c.kneeRps < 8, `a knee under the ramp's end: ${c.kneeRps}`);
    assert.equal(c.bottleneck?.service, 'llm-vllm');
    assert.match(c.bottleneck!.pod ?? '', /^llm-vllm-/);
    assert.ok(['engine_queue', 'running_limit'].includes(c.bottleneck!.resource), c.bottleneck!.resource);
  }
);
