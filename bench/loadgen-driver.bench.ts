/**
 * Does the driver keep its open-loop schedule? 2,000 non-streaming requests/s against a trivial local endpoint (its
 * own process), measured side by side with autocannon (npm) rate-limited to the same 2,000 req/s on the same endpoint.
 * Reported: achieved req/s for both, and for the driver the share of requests sent > 10 ms late (target < 5%).
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { abCompare, abRow, median, report, smoke } from './lib/ab';
import { runLoad, type Summary } from '../loadgen/src/load/driver';
import { benchLoad, constantProfile, cpuNow } from './lib/driver-load';

const RPS = Number(process.env.BENCH_RPS ?? smoke(2000, 200));
const SECONDS = Number(process.env.BENCH_SECONDS ?? smoke(3, 1));

const server = spawn(
  process.execPath,
  [
    '-e',
    `
  const http = require('node:http');
  const s = http.createServer((q, r) => { q.resume(); q.on('end', () => { r.writeHead(200, { 'content-type': 'application/json' }); r.end('{"ok":true}'); }); });
  s.keepAliveTimeout = 30000;
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
);
const port = await new Promise<number>((resolve) =>
  server.stdout!.once('data', (d) => resolve(Number(String(d).trim())))
);
const target = `http://127.0.0.1:${port}`;

const drivers: Summary[] = [];
const cannons: autocannon.Result[] = [];
// CPU per request of this process (both tools run in it): independent of how busy the shared machine is.
const cpuUs: Record<'driver' | 'autocannon', number[]> = { driver: [], autocannon: [] };
try {
  const r = await abCompare({
    name: `achieved req/s at a ${RPS} req/s target`,
    unit: 'req/s',
    rounds: 5,
    a: {
      label: 'autocannon (overallRate)',
      run: async () => {
        const c0 = cpuNow();
        const res = await autocannon({
          url: `${target}/x`,
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json' },
          connections: 64,
          overallRate: RPS,
          duration: SECONDS,
        });
        cannons.push(res);
        cpuUs.autocannon.push((cpuNow() - c0) / Math.max(1, res.requests.total));
        return res.requests.total / SECONDS;
      },
    },
    b: {
      label: 'hopscope-load driver',
      run: async () => {
        const c0 = cpuNow();
        const s = await runLoad(
          benchLoad(target, constantProfile(RPS, SECONDS), {
            path: '/x',
            rawBody: '{}',
            stream: false,
            maxTokens: 1,
          })
        );
        drivers.push(s);
        cpuUs.driver.push((cpuNow() - c0) / Math.max(1, s.sent));
        return s.succeeded / s.durationS;
      },
    },
  });
  const late = drivers.map((d) => d.schedule.lateRatio * 100);
  report('loadgen driver vs autocannon (same endpoint, alternating rounds)', [abRow(r)], { ab: r });
  report(
    'driver schedule keeping (per-round medians; target: < 5% sent > 10 ms late)',
    [
      {
        measure: 'driver: % sent > 10 ms late (median of rounds)',
        value: median(late),
        worst: Math.max(...late),
        target: '< 5',
      },
      {
        measure: 'driver: late p99 ms (median of rounds)',
        value: median(drivers.map((d) => d.schedule.lateP99Ms ?? NaN)),
        worst: Math.max(...drivers.map((d) => d.schedule.lateP99Ms ?? NaN)),
        target: '-',
      },
      {
        measure: 'driver: latency p99 ms (median)',
        value: median(drivers.map((d) => d.latencyMs.p99 ?? NaN)),
        worst: Math.max(...drivers.map((d) => d.latencyMs.p99 ?? NaN)),
        target: '-',
      },
      {
        measure: 'autocannon: latency p99 ms (median)',
        value: median(cannons.map((c) => c.latency.p99)),
        worst: Math.max(...cannons.map((c) => c.latency.p99)),
        target: '-',
      },
      {
        measure: 'driver: errors (sum)',
        value: drivers.reduce((n, d) => n + d.errors.total, 0),
        worst: '-',
        target: '0',
      },
      {
        measure: 'driver: client CPU µs/request (median)',
        value: median(cpuUs.driver),
        worst: Math.max(...cpuUs.driver),
        target: '-',
      },
      {
        measure: 'autocannon: client CPU µs/request (median)',
        value: median(cpuUs.autocannon),
        worst: Math.max(...cpuUs.autocannon),
        target: '-',
      },
    ],
    {
      cpuUsPerRequest: cpuUs,
      lateRatioPct: late,
      driverLateP99Ms: drivers.map((d) => d.schedule.lateP99Ms ?? NaN),
      rps: RPS,
      seconds: SECONDS,
    }
  );
} finally {
  server.kill();
}
