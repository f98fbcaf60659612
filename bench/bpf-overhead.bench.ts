/**
 * bpf-exporter overhead, side by side (bench/lib/ab.ts alternation), as root on the real kernel:
 *  1. loopback HTTP (keep-alive, autocannon 10 connections): probes detached vs the default probes attached —
 *     throughput and P99 ratios (target: throughput −3% at most, P99 +5% at most);
 *  2. the exporter's own CPU (node + its bpftrace children, from /proc) at 5,000 events/s (target ≤ 2% of one core
 *     for the node process) — events are failing allocations through a stand-in libcuda.so.1, a rate we control;
 *  3. loss at 20,000 events/s: calls made vs events received and bpftrace's lost_events;
 *  4. http_traceparent (sampling every request) vs detached: per-request latency cost, 1 connection.
 * Usage: npm run bench -- bpf   (BX_ROUNDS, BX_SECONDS to change the length)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machinePreflight } from '../bpf-exporter/src/core/preflight';
import { abCompare, abRow, report } from './lib/ab';

if (process.argv.includes('--help')) {
  console.log('Usage: tsx bench/bpf-overhead.bench.ts  (root, bpftrace, gcc; env BX_ROUNDS=5 BX_SECONDS=3)');
  process.exit(0);
}
const pre = machinePreflight('bpftrace');
if (!pre.ok) {
  console.log(`bpf-overhead: skipped — ${pre.reason}`);
  process.exit(0);
}

interface CannonResult { requests: { average: number }; latency: { p99: number; average: number }; errors: number; non2xx: number }
const autocannon = createRequire(import.meta.url)('autocannon') as (o: Record<string, unknown>) => Promise<CannonResult>;
const ROUNDS = Number(process.env.BX_ROUNDS ?? 5);
const SECONDS = Number(process.env.BX_SECONDS ?? 3);
const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'bx-bench-'));
const started: ChildProcess[] = [];

function cleanup(): void {
  for (const c of started) if (c.exitCode === null) c.kill('SIGINT');
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

// Stand-in CUDA driver + a generator that fails allocations at a fixed rate and prints how many it made.
const gcc = (args: string[]): void => { const r = spawnSync('gcc', args, { encoding: 'utf8' }); if (r.status !== 0) throw new Error(r.stderr); };
gcc(['-shared', '-fPIC', '-O1', '-o', join(dir, 'libcuda.so.1'), join(root, 'tests/integration/bpf-exporter/fake-libcuda.c')]);
writeFileSync(join(dir, 'gen.c'), `
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef unsigned long long CUdeviceptr;
int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  double rate = atof(argv[1]), secs = atof(argv[2]); long n = 0; double t0 = now();
  for (;;) {
    double el = now() - t0; if (el >= secs) break;
    long due = (long)(el * rate);
    while (n < due) { CUdeviceptr p; cuMemAlloc_v2(&p, 1ULL << 40); n++; }
    struct timespec s = {0, 200000}; nanosleep(&s, NULL);
  }
  printf("%ld\\n", n); return 0;
}`);
gcc(['-O1', '-o', join(dir, 'gen'), join(dir, 'gen.c'), `-L${dir}`, '-l:libcuda.so.1', `-Wl,-rpath,${dir}`]);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RunningExporter { url: string; child: ChildProcess; stop(): Promise<void> }

async function startExporter(probes: string, extraEnv: Record<string, string> = {}): Promise<RunningExporter> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bpf-exporter/src/main.ts')], {
    cwd: root, stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, HOPSCOPE_BPF_PORT: '0', HOPSCOPE_BPF_PROBES: probes, HOPSCOPE_BPF_LIBCUDA: join(dir, 'libcuda.so.1'), HOPSCOPE_LOG_LEVEL: 'info', ...extraEnv },
  });
  started.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`exporter exited ${c}: ${buf}`)));
  });
  // Wait until every probe is attached.
  for (let i = 0; i < 200; i++) {
    const h = (await (await fetch(`${url}/health`)).json()) as { probes: Array<{ attached: boolean; state: string; name: string; reason?: string }> };
    if (h.probes.every((p) => p.attached)) break;
    if (h.probes.some((p) => p.state === 'restarting' || p.state === 'not_attached')) throw new Error(`probe failed: ${JSON.stringify(h.probes)}`);
    await sleep(100);
  }
  return {
    url, child,
    stop: () => new Promise<void>((r) => { if (child.exitCode !== null) return r(); child.once('exit', () => r()); child.kill('SIGINT'); }),
  };
}

function httpServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', `
    const http = require('node:http');
    const s = http.createServer((q, r) => { q.resume(); r.end('{"ok":true}'); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  return new Promise((resolve) => child.stdout!.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${String(d).trim()}/`, child })));
}

/** CPU seconds (user+sys) of a process and its direct children (bpftrace). */
function cpuSeconds(pid: number): { self: number; children: number } {
  const tick = 100;
  const stat = (p: number): number => {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8');
      const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return (Number(parts[11]) + Number(parts[12])) / tick;
    } catch { return 0; }
  };
  let children = 0;
  try {
    for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) children += stat(Number(c));
  } catch { /* none */ }
  return { self: stat(pid), children };
}

const metric = async (url: string, re: RegExp): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const l of text.split('\n')) if (re.test(l)) sum += Number(l.split(' ').pop());
  return sum;
};

function runGen(rate: number, secs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(join(dir, 'gen'), [String(rate), String(secs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => { out += d; });
    c.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`gen exited ${code}`))));
  });
}

const results: Record<string, unknown> = {};
const rows: Array<Record<string, string | number>> = [];
try {
  const server = await httpServer();
  await autocannon({ url: server.url, connections: 10, duration: 1 }); // warm up
  const cannon = (connections: number) => autocannon({ url: server.url, connections, duration: SECONDS });

  // 1. throughput and P99, detached vs default probes attached. The exporter is started before and stopped after the
  // measured window of B; A runs with nothing attached.
  const rps: number[][] = [[], []];
  const p99: number[][] = [[], []];
  const tp = await abCompare({
    name: 'HTTP req/s (10 conns, keep-alive)', unit: 'req/s', rounds: ROUNDS,
    a: { label: 'detached', run: async () => { const r = await cannon(10); rps[0].push(r.requests.average); p99[0].push(r.latency.p99); return r.requests.average; } },
    b: {
      label: 'default probes attached',
      run: async () => {
        const e = await startExporter('tcp_connect,tcp_retransmit,tls_handshake,gpu_alloc_fail');
        try { const r = await cannon(10); rps[1].push(r.requests.average); p99[1].push(r.latency.p99); return r.requests.average; } finally { await e.stop(); }
      },
    },
  });
  rows.push(abRow(tp));
  const p99ratios = p99[0].map((a, i) => p99[1][i] / a);
  const med = (xs: number[]): number => { const s = [...xs].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  rows.push({ measure: 'HTTP P99 latency', 'A: detached (req/s)': med(p99[0]), 'B: default probes attached (req/s)': med(p99[1]), 'ratio B/A (median)': med(p99ratios), spread: `${Math.min(...p99ratios).toFixed(3)}–${Math.max(...p99ratios).toFixed(3)}`, rounds: p99ratios.length });
  results.throughput = tp;
  results.p99 = { detachedMs: p99[0], attachedMs: p99[1], ratioMedian: med(p99ratios) };

  // 2 + 3. exporter CPU at 5,000 events/s and loss at 20,000 events/s.
  const e = await startExporter('gpu_alloc_fail');
  const pid = e.child.pid!;
  for (const rate of [5000, 20000]) {
    const secs = 5;
    const before = { cpu: cpuSeconds(pid), got: await metric(e.url, /^hopscope_bpf_events_total\{probe="gpu_alloc_fail"/), lost: await metric(e.url, /^hopscope_bpf_events_lost_total\{probe="gpu_alloc_fail"/) };
    const t0 = Date.now();
    const sent = await runGen(rate, secs);
    await sleep(1000); // let the pipe drain
    const wall = (Date.now() - t0) / 1000;
    const after = { cpu: cpuSeconds(pid), got: await metric(e.url, /^hopscope_bpf_events_total\{probe="gpu_alloc_fail"/), lost: await metric(e.url, /^hopscope_bpf_events_lost_total\{probe="gpu_alloc_fail"/) };
    const r = {
      rate, sent, received: after.got - before.got, lost: after.lost - before.lost,
      exporterCpuPctOfCore: (100 * (after.cpu.self - before.cpu.self)) / wall,
      bpftraceCpuPctOfCore: (100 * (after.cpu.children - before.cpu.children)) / wall,
    };
    results[`events_${rate}`] = r;
    rows.push({ measure: `${rate} events/s for ${secs} s`, 'A: detached (req/s)': `sent ${sent}`, 'B: default probes attached (req/s)': `received ${r.received}, lost ${r.lost}`, 'ratio B/A (median)': r.received / sent, spread: `exporter ${r.exporterCpuPctOfCore.toFixed(2)}% + bpftrace ${r.bpftraceCpuPctOfCore.toFixed(2)}% of a core`, rounds: 1 });
  }
  await e.stop();

  // 4. http_traceparent cost per request: 1 connection, sequential requests carrying a traceparent.
  const tpHeader = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
  const seq = () => autocannon({ url: server.url, connections: 1, duration: SECONDS, headers: tpHeader });
  const lat = await abCompare({
    name: 'mean latency per request, 1 conn', unit: 'ms', rounds: ROUNDS,
    a: { label: 'detached', run: async () => (await seq()).latency.average },
    b: {
      label: 'http_traceparent every request',
      run: async () => {
        const x = await startExporter('http_traceparent', { HOPSCOPE_BPF_TRACEPARENT_SAMPLE: '1' });
        try { return (await seq()).latency.average; } finally { await x.stop(); }
      },
    },
  });
  rows.push(abRow(lat));
  results.traceparent = { ...lat, costPerRequestUs: (lat.b.median - lat.a.median) * 1000 };
  rows.push({ measure: 'http_traceparent cost per request', 'A: detached (req/s)': '', 'B: default probes attached (req/s)': `${((lat.b.median - lat.a.median) * 1000).toFixed(1)} µs`, 'ratio B/A (median)': lat.ratio.median, spread: '', rounds: ROUNDS });
  report('bpf-exporter overhead (side by side)', rows, results);
  server.child.kill();
} finally {
  cleanup();
}
process.exit(0);
