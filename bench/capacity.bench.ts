/**
 * What capacity costs. (1) The proxy's analysis of a 10-step sweep with 50,000 requests: the client's real per-step
 * tally (StepTally) fed 50,000 sends and answers, then the pure analysis (contract/capacity-analysis.ts) over its 10
 * steps and the saturation signals of 30 pods × 4 series × 240 points (what the proxy reads for a run: the Prometheus
 * queries themselves are not in this figure). Target ≤ 200 ms. (2) The sweep's driver overhead: CPU of the driver's
 * process per request at 2,000 req/s on a trivial local endpoint, a constant profile (no step tally) vs a 10-step
 * sweep at the same rate (step tally on), alternating rounds. Target B/A ≤ 1.02.
 */
import { spawn } from 'node:child_process';
import type { SaturationSignal } from '../contract/capacity';
import { analyseCapacity } from '../contract/capacity-analysis';
import { runLoad } from '../loadgen/src/load/driver';
import type { Profile } from '../loadgen/src/load/profiles';
import { benchLoad, constantProfile, cpuNow } from './lib/driver-load';
import { StepTally } from '../loadgen/src/load/steps';
import { abCompare, abRow, median, report, smoke, SMOKE } from './lib/ab';

const RPS = Number(process.env.BENCH_RPS ?? 2000);
// A smoke run (bench/lib/ab.ts): one round of each measure, the driver's rounds half a second long, no warm-up.
const SECONDS = Number(process.env.BENCH_SECONDS ?? smoke(4, 0.5));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? smoke(7, 1));

// (1) The analysis.
const REQUESTS = 50_000;
const sweep: Profile = { kind: 'sweep', startRps: 100, rps: 1000, steps: 10, durationS: 90, arrivals: 'uniform' };
const T0 = 1_800_000_000_000;
const signals: SaturationSignal[] = [];
const resources = ['engine_queue', 'running_limit', 'kv_cache', 'cpu'] as const;
for (let pod = 0; pod < 30; pod++)
  for (const resource of resources)
    signals.push({
      service: `hop-${pod % 6}`,
      pod: `hop-${pod % 6}-${pod}`,
      resource,
      metric: resource,
      limit: resource === 'running_limit' ? null : resource === 'engine_queue' ? 1 : 0.9,
      points: Array.from({ length: 240 }, (_, i): [number, number] => [
        T0 + i * 375,
        pod === 7 && resource === 'engine_queue' ? Math.max(0, i - 150) : 0.3,
      ]),
    });
const tallyMs: number[] = [];
const analysisMs: number[] = [];
let last: ReturnType<typeof analyseCapacity> | undefined;
for (let r = 0; r < ROUNDS; r++) {
  const t0 = performance.now();
  const tally = new StepTally(sweep);
  for (let i = 0; i < REQUESTS; i++) {
    const t = (i / REQUESTS) * sweep.durationS;
    tally.onSend(t, i % 50 === 0 ? 12 : 1);
    tally.onDone(t, t + 0.4, i % 40 !== 0, i % 20 !== 0, 300 + (i % 97));
  }
  const steps = tally.result(T0, sweep.durationS);
  const t1 = performance.now();
  // What the proxy does with a finished run's steps and the signals it read.
  last = analyseCapacity(steps, signals);
  analysisMs.push(performance.now() - t1);
  tallyMs.push(t1 - t0);
}
report(
  `capacity of a 10-step sweep with ${REQUESTS} requests over ${signals.length} signals (target ≤ 200 ms in the proxy)`,
  [
    {
      part: "the proxy's analysis (steps + signals)",
      'median ms': median(analysisMs),
      'max ms': Math.max(...analysisMs),
      rounds: ROUNDS,
    },
    {
      part: "the client's step tally of 50,000 requests",
      'median ms': median(tallyMs),
      'max ms': Math.max(...tallyMs),
      rounds: ROUNDS,
    },
  ],
  { analysisMs, tallyMs, knee: last?.kneeRps, bottleneck: last?.bottleneck }
);

if (process.env.BENCH_ONLY === 'analysis') process.exit(0);

// (2) The driver's overhead.
const server = spawn(
  process.execPath,
  [
    '-e',
    `
  const http = require('node:http');
  const chunk = (c) => 'data: ' + JSON.stringify({ choices: [{ delta: c }] }) + '\\n\\n';
  const body = chunk({ role: 'assistant', content: '' }) + [0, 1, 2, 3].map((i) => chunk({ content: 't' + i })).join('')
    + 'data: ' + JSON.stringify({ choices: [], usage: { completion_tokens: 4 } }) + '\\n\\ndata: [DONE]\\n\\n';
  const s = http.createServer((q, r) => { q.resume(); q.on('end', () => { r.writeHead(200, { 'content-type': 'text/event-stream' }); r.end(body); }); });
  s.keepAliveTimeout = 30000;
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
);
const port = await new Promise<number>((resolve) =>
  server.stdout!.once('data', (d) => resolve(Number(String(d).trim())))
);
const round = (profile: Profile) => async (): Promise<number> => {
  const c0 = cpuNow();
  const s = await runLoad(benchLoad(`http://127.0.0.1:${port}`, profile));
  return (cpuNow() - c0) / Math.max(1, s.completed);
};
const constant: Profile = constantProfile(RPS, SECONDS);
// The same rate in 10 steps (1 req/s apart): the same arrivals, with the step tally counting them.
const steps: Profile = {
  kind: 'sweep',
  startRps: RPS - 1,
  rps: RPS,
  steps: 10,
  durationS: SECONDS,
  arrivals: 'uniform',
};
try {
  if (!SMOKE) {
    await round(constant)();
    await round(steps)();
  }
  const r = await abCompare({
    name: `driver CPU per request at ${RPS} req/s`,
    unit: 'µs',
    rounds: ROUNDS,
    a: { label: 'constant (no step tally)', run: round(constant) },
    b: { label: 'sweep, 10 steps (step tally on)', run: round(steps) },
  });
  report(
    'sweep driver overhead: CPU per request, sweep vs constant (alternating rounds; target ratio ≤ 1.02)',
    [abRow(r)],
    {
      ab: r,
    }
  );
} finally {
  server.kill();
}
