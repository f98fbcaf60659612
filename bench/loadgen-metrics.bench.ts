/**
 * What the client metrics cost the driver: 2,000 req/s against a trivial local streaming endpoint (its own process:
 * a role chunk, then 4 tokens, so every request records TTFT, TPOT, 3 inter-token gaps and its latency), client
 * metrics off vs on (the OTel Prometheus exporter, scraped every second by the server's process, so the
 * serialisation is paid here too), alternating rounds. Measured: CPU time of the driver's process per request.
 * Target: on/off ≤ 1.02.
 */
import { spawn } from 'node:child_process';
import { abCompare, abRow, median, report, smoke } from './lib/ab';
import { runLoad, type Summary } from '../loadgen/src/load/driver';
import { benchLoad, constantProfile, cpuNow } from './lib/driver-load';
import { startClientMetrics } from '../loadgen/src/metrics/readers';

const RPS = Number(process.env.BENCH_RPS ?? smoke(2000, 200));
const SECONDS = Number(process.env.BENCH_SECONDS ?? smoke(4, 1));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? smoke(7, 1));

// The endpoint, and a scraper of whatever metrics URL it is told on stdin.
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
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
  let scrape;
  process.stdin.on('data', (d) => {
    clearInterval(scrape);
    const url = String(d).trim();
    if (url !== 'none') scrape = setInterval(() => fetch(url).then((r) => r.text()).catch(() => {}), 1000);
  });`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] }
);
const port = await new Promise<number>((resolve) =>
  server.stdout!.once('data', (d) => resolve(Number(String(d).trim())))
);
const target = `http://127.0.0.1:${port}`;

const sums: Record<'off' | 'on', Summary[]> = { off: [], on: [] };
const scrapedSeries: number[] = [];

const round = (label: 'off' | 'on') => async (): Promise<number> => {
  const metrics = await startClientMetrics({
    mode: label === 'on' ? 'prometheus' : 'none',
    runId: 'bench',
    scenario: 'bench',
    workerId: 'bench',
    host: '127.0.0.1',
    port: 0,
    waitMaxMs: 0,
    expectScrape: () => false,
  });
  server.stdin!.write(`${metrics.url ?? 'none'}\n`);
  const c0 = cpuNow();
  const s = await runLoad(
    benchLoad(target, constantProfile(RPS, SECONDS), {
      onStart: (live) => metrics.instruments?.attach(live),
      onResult: metrics.instruments ? (r) => metrics.instruments!.record(r) : undefined,
    })
  );
  const cpu = cpuNow() - c0;
  if (metrics.url)
    scrapedSeries.push(
      (await (await fetch(metrics.url)).text()).split('\n').filter((l) => l.startsWith('hopscope_load_')).length
    );
  await metrics.close();
  server.stdin!.write('none\n');
  sums[label].push(s);
  return cpu / Math.max(1, s.completed);
};

try {
  // Warm-up (JIT, connection pools) on both.
  await round('off')();
  await round('on')();
  sums.off.length = 0;
  sums.on.length = 0;
  const r = await abCompare({
    name: `driver CPU per request at ${RPS} req/s`,
    unit: 'µs',
    rounds: ROUNDS,
    a: { label: 'metrics off', run: round('off') },
    b: { label: 'metrics on (Prometheus, scraped 1/s)', run: round('on') },
  });
  report('client metrics cost: driver CPU, metrics on vs off (alternating rounds; target ratio ≤ 1.02)', [abRow(r)], {
    ab: r,
  });
  const row = (label: 'off' | 'on') => ({
    metrics: label,
    'achieved req/s (median)': median(sums[label].map((s) => s.completed / s.durationS)),
    '% sent > 10 ms late (median)': median(sums[label].map((s) => s.schedule.lateRatio * 100)),
    'ITL values per request': median(sums[label].map((s) => s.itlMs.count / Math.max(1, s.completed))),
    'errors (sum)': sums[label].reduce((n, s) => n + s.errors.total, 0),
  });
  report('rounds', [row('off'), row('on')], {
    rps: RPS,
    seconds: SECONDS,
    overheadPct: (r.ratio.median - 1) * 100,
    scrapedSeries: median(scrapedSeries),
  });

  // The same cost without the noise of a shared machine: what recording one streamed request and serving one scrape
  // take, against the driver's own CPU per request (metrics off).
  const m = await startClientMetrics({
    mode: 'prometheus',
    runId: 'bench',
    scenario: 'bench',
    workerId: 'bench',
    host: '127.0.0.1',
    port: 0,
    waitMaxMs: 0,
    expectScrape: () => false,
  });
  const N = 200_000;
  const res = { outcome: 'ok' as const, latencyMs: 12.5, ttftMs: 3.1, tpotMs: 3.1, itl: [3.2, 2.9, 3.3], tokens: 4 };
  const c0 = cpuNow();
  for (let i = 0; i < N; i++) {
    res.latencyMs = 5 + (i % 97);
    m.instruments!.record(res);
  }
  const recordUs = (cpuNow() - c0) / N;
  const s0 = cpuNow();
  for (let i = 0; i < 20; i++) await (await fetch(m.url!)).text();
  const scrapeUs = (cpuNow() - s0) / 20;
  await m.close();
  const driverUs = r.a.median;
  report(
    "per-request cost, measured alone (share of the driver's CPU per request with metrics off)",
    [
      {
        measure: 'record one streamed request (6 values + counters)',
        µs: recordUs,
        'share %': (100 * recordUs) / driverUs,
      },
      {
        measure: `one scrape, spread over ${RPS} requests (1 scrape/s)`,
        µs: scrapeUs / RPS,
        'share %': (100 * scrapeUs) / RPS / driverUs,
      },
    ],
    { recordUs, scrapeUs, driverUsPerRequest: driverUs }
  );
} finally {
  server.kill();
}
