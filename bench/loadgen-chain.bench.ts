/**
 * The chain under 300 chained requests/s (gateway → embedding → vector-cache (→ rag) → llm, non-streaming, 16
 * tokens), tracing on (every trace sampled and exported over OTLP/HTTP to a local sink) vs tracing off (no SDK),
 * side by side: two chain processes, alternating rounds. Reported: completed req/s, P99, errors, and the chain
 * process's CPU per request (from /proc), whose ratio is the tracing overhead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { abCompare, abRow, median, report, smoke, SMOKE } from './lib/ab';
import { runLoad, type Summary } from '../loadgen/src/load/driver';

const RPS = Number(process.env.BENCH_RPS ?? smoke(300, 50));
const SECONDS = Number(process.env.BENCH_SECONDS ?? smoke(4, 1));
// BENCH_SPLIT=1: one process per pod (the demo's layout), so the chain can use both cores.
const SPLIT = /^(1|on|true)$/i.test(process.env.BENCH_SPLIT ?? '');
const root = join(import.meta.dirname, '..');

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

// OTLP sink: accepts and discards (so the exporter does its real work: serialise + POST).
let exported = 0;
const sink = http.createServer((req, res) => {
  req.on('data', (c) => {
    exported += c.length;
  });
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;

async function startChainProcess(tracing: boolean): Promise<{ child: ChildProcess; gateway: string; cpuMs(): number }> {
  const control = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'loadgen/src/chain/main.ts'),
      '--gateway-port',
      '0',
      '--control-port',
      String(control),
      '--time-scale',
      '0.05',
      ...(tracing ? [] : ['--no-tracing']),
      ...(SPLIT ? ['--split'] : []),
    ],
    {
      env: {
        ...process.env,
        HOPSCOPE_LOG_LEVEL: 'warn',
        HOPSCOPE_OTLP_ENDPOINT: sinkUrl,
        HOPSCOPE_SAMPLER_ADAPTIVE: 'off',
        HOPSCOPE_SAMPLER_BASE_RATE: '1',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    }
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const topo = (await (await fetch(`http://127.0.0.1:${control}/topology`)).json()) as { gateway: string };
      const topoPids = (
        (await (await fetch(`http://127.0.0.1:${control}/topology`)).json()) as { hops: Array<{ pid: number }> }
      ).hops.map((h) => h.pid);
      const pids = [...new Set([child.pid!, ...topoPids])];
      // utime + stime (clock ticks, 100/s) of the chain's process(es).
      const cpuMs = () =>
        pids.reduce((sum, pid) => {
          const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          return sum + ((Number(f[11]) + Number(f[12])) * 1000) / 100;
        }, 0);
      return { child, gateway: topo.gateway, cpuMs };
    } catch {
      if (Date.now() > deadline) throw new Error('chain did not start');
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

const on = await startChainProcess(true);
const off = await startChainProcess(false);
const sums: Record<string, Summary[]> = { on: [], off: [] };
const cpu: Record<string, number[]> = { on: [], off: [] };
const round = (label: 'on' | 'off', c: typeof on) => async () => {
  const cpu0 = c.cpuMs();
  const s = await runLoad({
    target: c.gateway,
    path: '/v1/chat/completions',
    method: 'POST',
    profile: { kind: 'constant', rps: RPS, durationS: SECONDS, arrivals: 'poisson' },
    stream: false,
    models: ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2'],
    backend: 'mix',
    agentRatio: 0,
    maxTokens: 16,
    seed: 3,
    runId: `bench-${label}`,
    timeoutMs: 15_000,
    connections: 256,
    maxInFlight: 20_000,
    slo: { e2eMs: 2000 },
    traceparent: false,
  });
  sums[label].push(s);
  cpu[label].push((c.cpuMs() - cpu0) / Math.max(1, s.succeeded));
  return s.succeeded / s.durationS;
};
try {
  // Warm-up (JIT, connection pools) on both; a smoke run (bench/lib/ab.ts) needs none.
  if (!SMOKE) {
    await round('on', on)();
    await round('off', off)();
  }
  sums.on.length = sums.off.length = cpu.on.length = cpu.off.length = 0;
  const r = await abCompare({
    name: `completed req/s at ${RPS} req/s offered`,
    unit: 'req/s',
    rounds: 5,
    a: { label: 'tracing off', run: round('off', off) },
    b: { label: 'tracing on', run: round('on', on) },
  });
  report('chain throughput, tracing on vs off (alternating rounds)', [abRow(r)], { ab: r });
  const row = (label: 'on' | 'off') => ({
    tracing: label,
    'completed req/s': median(sums[label].map((s) => s.succeeded / s.durationS)),
    'p50 ms': median(sums[label].map((s) => s.latencyMs.p50 ?? NaN)),
    'p99 ms': median(sums[label].map((s) => s.latencyMs.p99 ?? NaN)),
    'errors (sum)': sums[label].reduce((n, s) => n + s.errors.total, 0),
    'chain CPU ms/request': median(cpu[label]),
    '% sent >10 ms late': median(sums[label].map((s) => s.schedule.lateRatio * 100)),
  });
  const cpuRatio = median(cpu.on) / median(cpu.off);
  report(
    `chain details${SPLIT ? ' (split: one process per pod)' : ' (one process)'} (median of rounds); tracing CPU overhead ×${cpuRatio.toFixed(2)} per request`,
    [row('off'), row('on')],
    { cpuMsPerRequest: cpu, cpuRatio, otlpBytesExported: exported }
  );
} finally {
  on.child.kill('SIGTERM');
  off.child.kill('SIGTERM');
  sink.close();
  sink.closeAllConnections();
}
