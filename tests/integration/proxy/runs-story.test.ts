/**
 * The load-test story end to end, with the real parts: the simulated chain (in this process, time scale 0.05, spans
 * to the proxy's embedded store), the real proxy on an embedded PGlite data dir, and the real `hopscope-load` CLI
 * (`main()` of loadgen/src/cli.ts). Two runs of one scenario; in the second a latency fault on rag (through the
 * chain's fault API). The gate `--baseline-run <first> --max-regression 'p99_ms:+10%'` fails the second (exit 1), the
 * proxy records both, and the compare of the second against the first ranks rag first with its own-time delta.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunCompareAnswer, RunList, RunRecord } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { main } from '../../../loadgen/src/cli';
import { freePort } from '../../support/real-servers';

// Large against the tail a busy machine adds to a run of 40 requests (its p99 is nearly its max), so the gate judges
// the fault, not the machine; the chain keeps its default hop timeout (15 s), which a starved machine does not reach.
const FAULT_MS = 800;
let proxy: RunningProxy;
let chain: RunningChain;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runs-story-'));
  const port = await freePort();
  chain = await startChain({
    gatewayPort: 0,
    controlPort: 0,
    timeScale: 0.05,
    logLevel: 'silent',
    otlpEndpoint: `http://127.0.0.1:${port}/v1/traces`,
    samplerAdaptive: false,
  });
  proxy = await startProxy({
    port,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: chain.controlUrl,
    alertIntervalMs: 0,
    dataDir: join(dir, 'data'),
  });
});
after(async () => {
  await chain?.stop();
  await proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function load(runId: string, extra: string[] = []): Promise<{ code: number; err: string; json: any }> {
  let err = '';
  const out = join(dir, `${runId}.json`);
  const code = await main(
    [
      '--scenario',
      'single-turn-short',
      '--target',
      chain.gatewayUrl,
      '--control',
      chain.controlUrl,
      '--rps',
      '5',
      '--duration',
      '8s',
      '--run-id',
      runId,
      '--report',
      proxy.url,
      '--metrics',
      'none',
      '--quiet',
      '--spool-dir',
      join(dir, 'spool'),
      '--json',
      out,
      ...extra,
    ],
    () => {},
    (s) => {
      err += s;
    },
    { env: {} }
  );
  return { code, err, json: JSON.parse(readFileSync(out, 'utf8')) };
}

const getJson = async (path: string): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${proxy.url}${path}`);
  return { status: r.status, body: await r.json() };
};

test(
  'two runs of one scenario, a latency fault on rag in the second: the gate fails it and the compare ranks rag first',
  { timeout: 300_000 },
  async (t) => {
    // A first run against a cold chain (caches empty, code not yet compiled) is seconds slower than the next: warm it,
    // so the two runs compared differ by the fault alone.
    await load('story-warm');
    const first = await load('story-1');
    assert.equal(
      first.code,
      0,
      `${first.err} ${JSON.stringify(first.json.latencyMs)} ${JSON.stringify(first.json.errors)}`
    );
    assert.equal(first.json.report.delivered, true, first.err);

    const fault = (await (
      await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'rag', kind: 'latency', magnitude: FAULT_MS }),
      })
    ).json()) as { id: string };
    let second;
    try {
      second = await load('story-2', ['--baseline-run', 'story-1', '--max-regression', 'p99_ms:+10%']);
    } finally {
      await fetch(`${chain.controlUrl}/faults/${fault.id}`, { method: 'DELETE' });
    }
    t.diagnostic(`p99 ${first.json.latencyMs.p99} ms → ${second.json.latencyMs.p99} ms with the fault`);
    assert.equal(second.code, 1, `exit ${second.code}: ${second.err}`);
    assert.match(second.err, /regressed against baseline story-1: p99_ms/);
    await chain.forceFlush();

    // The proxy's records: the first passed, the second failed by its regression gate against the first.
    const r1 = RunRecord.parse((await getJson('/api/runs/story-1')).body);
    const r2 = RunRecord.parse((await getJson('/api/runs/story-2')).body);
    assert.equal(r1.status, 'passed');
    assert.equal(r2.status, 'failed');
    assert.equal(r2.baselineRunId, 'story-1');
    const gate = r2.regressions.find((g) => g.metric === 'p99_ms')!;
    assert.equal(gate.pass, false);
    assert.equal(gate.baseline, r1.summary!.latencyMs.p99);
    assert.ok(
      r2.slowest.length > 0 && r2.slowest.every((q) => q.traceId !== null),
      'the slowest requests carry trace ids'
    );
    const list = RunList.parse((await getJson('/api/runs')).body);
    assert.deepEqual(
      list.runs.map((r) => r.runId),
      ['story-2', 'story-1', 'story-warm']
    );

    const { status, body } = await getJson('/api/runs/story-2/compare/story-1');
    assert.equal(status, 200, JSON.stringify(body));
    const a = RunCompareAnswer.parse(body);
    t.diagnostic(
      `candidates: ${a.candidates
        .slice(0, 4)
        .map((c) => `${c.service} ${c.score.toFixed(2)}`)
        .join(', ')}; hops: ${a.hops
        .slice(0, 3)
        .map((h) => `${h.service} ${h.operation} ${h.deltaP50Ms}`)
        .join(', ')}`
    );
    // Every request of both runs is a trace in the store, found by its run id.
    assert.equal(a.traces.run, r2.summary!.completed);
    assert.equal(a.traces.baseline, r1.summary!.completed);
    assert.equal(a.traces.source, 'embedded');
    assert.equal(a.candidates[0].service, 'rag');
    const rag = a.hops[0];
    assert.equal(rag.service, 'rag');
    // Half the requests go through rag (routes chat:1, rag:1), each delayed by the fault inside rag's server span.
    assert.ok(
      rag.deltaP50Ms! > FAULT_MS * 0.8 && rag.deltaP50Ms! < FAULT_MS * 1.5,
      `rag own-time P50 delta ${rag.deltaP50Ms}`
    );
    assert.ok(a.candidates[0].evidence.some((e) => e.summary.startsWith('against baseline run story-1: own time')));
    assert.equal(a.client.run.e2eP99Ms, r2.e2eP99Ms);
    assert.equal(a.client.baseline.e2eP99Ms, r1.e2eP99Ms);
    assert.ok(a.client.run.e2eP99Ms! > a.client.baseline.e2eP99Ms!);
  }
);
