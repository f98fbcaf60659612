/**
 * Bounded fan-out (issue 20, finding 6): ten range root causes at once (GET /api/rca?maxTraces=1000 over 1,200
 * traces of 97 spans each, from Tempo) keep the proxy under the memory limit its deployment gives it
 * (deploy/kubernetes/backend-proxy.yaml) and answering /api/health and /metrics; the eleventh, past the window
 * budget, is a 503 with Retry-After and a JSON error naming the setting. The spans the ten held together stay within
 * the byte budget (each window's first trace aside); a maxTraces past the per-request cap is cut and said.
 *
 * Tempo cannot run here: the fake is tests/support/tempo-replay.ts, answering in the formats of Tempo's recorded
 * answers (../shared/fixtures/tempo). Its trace answers are held until the eleventh request is answered, so the ten
 * are in progress then whatever the machine's speed. The proxy is the CLI in a child process (its RSS its own). It
 * loads the machine, so it runs with no other test file beside it (hopscope-test: alone).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RcaRangeAnswer, type Span } from '../../../contract';
import { traceBytes, WINDOW_BUDGET_DEFAULTS } from '../../../backend-proxy/src/services/window-budget';
import { startProxyProcess, type ProxyProcess } from '../reliability/support/proxy-process';
import { syntheticTrace } from '../../support/rca/synthetic';
import { tempoReplay, type TempoReplay } from '../../support/tempo-replay';
import { waitFor } from '../../support/wait';

const TRACES = 1200;
const T0 = Date.now() - 20 * 60_000;
const FROM = T0 - 1000;
const TO = T0 + TRACES * 200 + 1000;

const DEPLOYMENT = readFileSync(join(import.meta.dirname, '../../../deploy/kubernetes/backend-proxy.yaml'), 'utf8');

/** The memory limit the shipped deployment gives the proxy (limits.memory, in Mi or Gi). */
function deployedMemoryLimit(): number {
  const yaml = DEPLOYMENT;
  const m = /limits:\s*\n(?:\s+cpu:.*\n)?\s+memory:\s*(\d+)(Mi|Gi)/.exec(yaml);
  assert.ok(m, 'the deployment states a memory limit for the proxy');
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 ** 3 : 1024 ** 2);
}

const peakRss = (pid: number): number =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

let tempo: TempoReplay;
let proxy: ProxyProcess;
let traces: Span[][];

before(async () => {
  traces = Array.from(
    { length: TRACES },
    (_, i) =>
      syntheticTrace({ seed: 7_001 + i, startMs: T0 + i * 200, agentSteps: 20, kernelNoise: 0, strayRetransmits: 0 })
        .spans
  );
  tempo = await tempoReplay(traces);
  // Node's options as the deployment sets them (its heap bound).
  const nodeOptions = /- name: NODE_OPTIONS\s*\n\s*value: (.+)/.exec(DEPLOYMENT)?.[1].trim().split(/\s+/) ?? [];
  proxy = await startProxyProcess(
    {
      HOPSCOPE_TEMPO_URL: tempo.url,
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_EXPORTER_URLS: 'none',
      HOPSCOPE_SOURCE_TIMEOUT_MS: '30000',
    },
    nodeOptions,
    180_000
  );
});
after(async () => {
  await proxy?.stop();
  await tempo?.close();
});

const rangeUrl = (maxTraces: number): string => `${proxy.url}/api/rca?from=${FROM}&to=${TO}&maxTraces=${maxTraces}`;

test('ten window answers at once: under the memory limit, health and /metrics answering; the eleventh 503 + Retry-After', async () => {
  const limit = deployedMemoryLimit();
  let open!: () => void;
  tempo.gate = new Promise<void>((r) => (open = r));
  const searchesBefore = tempo.queries.length;
  const ten = Array.from({ length: 10 }, () =>
    fetch(rangeUrl(1000), { signal: AbortSignal.timeout(900_000) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as unknown,
    }))
  );
  // Each admitted range asks Tempo three searches (all, failed, slowest) before reading traces, which wait at the gate.
  await waitFor('ten ranges admitted', async () => tempo.queries.length - searchesBefore >= 30, 60_000);
  const eleventh = await fetch(rangeUrl(1000));
  const refusal = (await eleventh.json()) as { error: { code: string; message: string } };
  assert.equal(eleventh.status, 503, JSON.stringify(refusal));
  assert.equal(eleventh.headers.get('retry-after'), String(WINDOW_BUDGET_DEFAULTS.retryAfterS));
  assert.equal(refusal.error.code, 'overloaded');
  assert.match(
    refusal.error.message,
    /10 window answers already \(at most 10 at once, HOPSCOPE_WINDOW_MAX_CONCURRENT\)/
  );
  open();
  tempo.gate = undefined;

  // While the ten work: /api/health and /metrics asked every 250 ms, each timed.
  let done = false;
  const polls: Array<{ path: string; status: number; ms: number }> = [];
  const poller = (async () => {
    while (!done) {
      for (const path of ['/api/health', '/metrics']) {
        const t0 = performance.now();
        const r = await fetch(`${proxy.url}${path}`, { signal: AbortSignal.timeout(120_000) });
        await r.arrayBuffer();
        polls.push({ path, status: r.status, ms: performance.now() - t0 });
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const answers = await Promise.all(ten);
  done = true;
  await poller;

  const rss = peakRss(proxy.child.pid!);
  const worst = Math.max(...polls.map((p) => p.ms));
  console.log(
    `ten ranges: peak RSS ${(rss / 1048576).toFixed(0)} MiB (limit ${limit / 1048576} MiB), ${polls.length} polls, slowest ${worst.toFixed(0)} ms, ${tempo.fetched()} traces fetched`
  );
  assert.ok(rss < limit, `peak RSS ${rss} under the deployment's limit ${limit}`);
  assert.ok(polls.length >= 2, 'polled while the ten worked');
  // Answered, every one (their latency under this machine's contention is a figure, printed above, not a bound).
  for (const p of polls) assert.equal(p.status, 200, `${p.path} answered`);

  // Every one answered; the spans they held together stayed within the byte budget (each one's first trace aside).
  const perTrace = Math.max(...traces.map(traceBytes));
  let analysed = 0;
  let cut = 0;
  for (const a of answers) {
    assert.equal(a.status, 200, JSON.stringify(a.body).slice(0, 300));
    const body = RcaRangeAnswer.parse(a.body);
    analysed += body.sample.analysed;
    if (body.missing.some((m) => /HOPSCOPE_WINDOW_MAX_BYTES/.test(m))) cut++;
  }
  assert.ok(
    analysed * Math.min(...traces.map(traceBytes)) <= WINDOW_BUDGET_DEFAULTS.bytes + 10 * perTrace,
    `${analysed} traces analysed in all: within the byte budget`
  );
  // The ten asked 10,000 traces of ~${perTrace} bytes: more than the budget, so some were cut, and said so.
  assert.ok(10 * 1000 * perTrace > WINDOW_BUDGET_DEFAULTS.bytes, 'the ten ask more than the byte budget');
  assert.ok(cut > 0, 'an answer cut by the byte budget says so');
});

test('a maxTraces past the per-request cap is cut to 1,000 and said in missing', async () => {
  const r = await fetch(rangeUrl(5000), { signal: AbortSignal.timeout(900_000) });
  assert.equal(r.status, 200);
  const body = RcaRangeAnswer.parse(await r.json());
  assert.ok(body.sample.analysed <= 1000, `${body.sample.analysed} analysed`);
  assert.ok(
    body.missing.some((m) => /maxTraces=5000 asked; a range answer reads at most 1000 traces/.test(m)),
    body.missing.join('\n')
  );
});
