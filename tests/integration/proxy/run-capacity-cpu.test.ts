/**
 * A run's capacity when a hop runs out of CPU (hopscope-test: alone: the hop's CPU must be its own core's, not a share
 * a neighbour's test takes): the simulated chain in split mode (one process per pod, each with its own
 * `process_cpu_seconds_total`), one embedding replica with the chain's `cpu_hog` fault (each request through it burns
 * 200 ms of real CPU on the replica's one burner thread: one core serves at most 5 of them a second), a real
 * Prometheus scraping the hops, the real proxy and the real `hopscope-load` sweeping RAG requests (every one through
 * embedding) from 2 to 12 req/s, 10 s a step. The run record names embedding, its pod and `cpu`, with the CPU figure as evidence.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RunRecord, RunSaturationAnswer } from '../../../contract';
import { DEFAULT_REPLICAS } from '../../../loadgen/src/chain/topology';
import { hopscopeLoad, startTestStack, type TestStack } from '../../support/stack';
import { havePrometheus, PROMETHEUS_BIN } from '../loadgen/support';

const skip = havePrometheus() ? undefined : `${PROMETHEUS_BIN} is missing (apt-get install prometheus)`;
const HOG_MS = 200;
let stack: TestStack | undefined;

before(async () => {
  if (skip) return;
  stack = await startTestStack({
    tmpPrefix: 'run-capacity-cpu-',
    split: { readyTimeoutMs: 120_000 },
    chain: { timeScale: 0.2, samplerAdaptive: false, replicas: { ...DEFAULT_REPLICAS, embedding: 1 } },
    proxy: (s) => ({
      prometheusUrl: s.promUrl,
      chainControlUrl: s.chain.controlUrl,
      dataDir: join(s.dir, 'data'),
      scrapeIntervalMs: 1000,
    }),
    prometheus: { chain: 'sd', runs: true },
  });
});
after(async () => {
  await stack?.close();
});

/** The hog's backlog (requests whose client gave up still burn) drained: the embedding pod's CPU back under a third. */
async function drained(): Promise<void> {
  const q = encodeURIComponent('max(rate(process_cpu_seconds_total{service="embedding"}[5s]))');
  for (const t0 = Date.now(); Date.now() - t0 < 60_000;) {
    const r = (await (await fetch(`${stack!.promUrl}/api/v1/query?query=${q}`)).json()) as {
      data: { result: Array<{ value: [number, string] }> };
    };
    const v = Number(r.data.result[0]?.value[1] ?? NaN);
    if (v < 0.33) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.fail('the embedding pod never went quiet after the sweep');
}

/** A RAG run (every request through embedding) of the given profile, and its capacity asserted on the hogged pod. */
async function capacityRun(
  t: { diagnostic(m: string): void },
  runId: string,
  profile: string[],
  maxGood: number
): Promise<void> {
  const s = stack!;
  const run = hopscopeLoad(s, runId, [
    ...['--scenario', 'single-turn-short', '--target', s.chain.gatewayUrl, '--control', s.chain.controlUrl],
    ...['--routes', 'rag=1', '--arrivals', 'uniform', '--max-tokens', '8', '--timeout', '8s'],
    ...profile,
  ]);
  await run.code;
  const sum = run.summary() as { steps: Array<{ offeredRps: number; achievedRps: number; sloHeld: boolean }> };
  t.diagnostic(JSON.stringify(sum.steps.map((x) => [x.offeredRps, x.achievedRps, x.sloHeld])));
  const rec = RunRecord.parse(await (await fetch(`${s.proxy.url}/api/runs/${runId}`)).json());
  const c = rec.capacity!;
  t.diagnostic(JSON.stringify(c));
  const sat = RunSaturationAnswer.parse(await (await fetch(`${s.proxy.url}/api/runs/${runId}/saturation`)).json());
  for (const x of sat.signals.filter((x) => x.resource === 'cpu'))
    t.diagnostic(`${x.pod} cpu max ${Math.max(...x.points.map((p) => p[1])).toFixed(2)}`);
  // Its knee is where achieved stopped following (5 a second): the sweep's 6 or 8, the ramp's 5.95–8.15 window.
  assert.ok(c.kneeRps !== null && c.kneeRps > 4 && c.kneeRps <= 8.2, `a knee past 4 req/s, by 8: ${c.kneeRps}`);
  // One burner thread serves at most 5 a second: no step above that held its SLOs; a ramp's window can hold them a
  // little past it while the queue builds (a quarter, one 4 s window of the ramp).
  assert.ok(c.maxGoodRps === null || c.maxGoodRps <= maxGood, `max good rate ${c.maxGoodRps}`);
  assert.equal(c.bottleneck?.service, 'embedding');
  assert.match(c.bottleneck!.pod ?? '', /^embedding-/);
  assert.equal(c.bottleneck!.resource, 'cpu');
  assert.match(c.bottleneck!.evidence, /process_cpu_seconds_total/);
}

test(
  'a sweep against a CPU-starved embedding names embedding, its pod and cpu',
  { skip, timeout: 180_000 },
  async (t) => {
    const fault = await fetch(`${stack!.chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'embedding', kind: 'cpu_hog', magnitude: HOG_MS }),
    });
    assert.equal(fault.status, 201, await fault.clone().text());
    await capacityRun(
      t,
      'cap-cpu',
      ['--profile', 'sweep', '--start-rps', '2', '--rps', '12', '--steps', '6', '--duration', '60s'],
      5
    );
  }
);

test(
  'a ramp against the same embedding finds the knee in its windows and names the same pod and cpu',
  { skip, timeout: 180_000 },
  async (t) => {
    await drained();
    await capacityRun(
      t,
      'cap-cpu-ramp',
      ['--profile', 'ramp', '--start-rps', '1', '--rps', '12', '--duration', '40s'],
      6.25
    );
  }
);
