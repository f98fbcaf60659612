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
    split: {},
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

test(
  'a sweep against a CPU-starved embedding names embedding, its pod and cpu',
  { skip, timeout: 180_000 },
  async (t) => {
    const s = stack!;
    const fault = await fetch(`${s.chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'embedding', kind: 'cpu_hog', magnitude: HOG_MS }),
    });
    assert.equal(fault.status, 201, await fault.clone().text());
    const run = hopscopeLoad(s, 'cap-cpu', [
      '--scenario',
      'single-turn-short',
      '--target',
      s.chain.gatewayUrl,
      '--control',
      s.chain.controlUrl,
      '--routes',
      'rag=1',
      '--profile',
      'sweep',
      '--arrivals',
      'uniform',
      '--start-rps',
      '2',
      '--rps',
      '12',
      '--steps',
      '6',
      '--duration',
      '60s',
      '--max-tokens',
      '8',
      '--timeout',
      '8s',
    ]);
    await run.code;
    const sum = run.summary() as { steps: Array<{ offeredRps: number; achievedRps: number; sloHeld: boolean }> };
    t.diagnostic(JSON.stringify(sum.steps.map((x) => [x.offeredRps, x.achievedRps, x.sloHeld])));
    const rec = RunRecord.parse(await (await fetch(`${s.proxy.url}/api/runs/cap-cpu`)).json());
    const c = rec.capacity!;
    t.diagnostic(JSON.stringify(c));
    const sat = RunSaturationAnswer.parse(await (await fetch(`${s.proxy.url}/api/runs/cap-cpu/saturation`)).json());
    for (const x of sat.signals.filter((x) => x.resource === 'cpu'))
      t.diagnostic(`${x.pod} cpu max ${Math.max(...x.points.map((p) => p[1])).toFixed(2)}`);
    assert.ok(c.kneeRps !== null && c.kneeRps < 12, `a knee under the sweep's top rate: ${c.kneeRps}`);
    // One burner thread serves at most 5 a second: no step above that held its SLOs.
    assert.ok(c.maxGoodRps !== null && c.maxGoodRps <= 5, `max good rate ${c.maxGoodRps}`);
    assert.equal(c.bottleneck?.service, 'embedding');
    assert.match(c.bottleneck!.pod ?? '', /^embedding-/);
    assert.equal(c.bottleneck!.resource, 'cpu');
    assert.match(c.bottleneck!.evidence, /process_cpu_seconds_total/);
  }
);
