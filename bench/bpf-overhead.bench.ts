/**
 * bpf-exporter overhead, side by side (bench/lib/ab.ts alternation), as root on the real kernel:
 *  1. loopback HTTP (keep-alive, 10 connections, closed loop): probes detached vs the default probes attached —
 *     throughput and P99 ratios (target: throughput −3% at most, P99 +5% at most);
 *  2. the exporter's own CPU (node + its bpftrace children, from /proc) at 5,000 events/s (target ≤ 2% of one core
 *     for the node process), side by side with the same exporter idle — events are failing allocations through a
 *     stand-in libcuda.so.1, a rate we control. Counts are kept in the kernel and per-event records capped by
 *     HOPSCOPE_BPF_EVENT_BUDGET (200/s per probe), so userspace handles ~200 records/s whatever the event rate;
 *  3. counts at 20,000 events/s: calls made vs failures counted (must be equal), records, suppressed, lost_events;
 *  4. http_traceparent (sampling every request) vs detached: per-request latency cost, 1 connection.
 * Usage: npm run bench -- bpf   (BX_ROUNDS, BX_SECONDS to change the length)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { machinePreflight } from '../bpf-exporter/src/core/preflight';
import { abCompare, report, smoke } from './lib/ab';

if (process.argv.includes('--help')) {
  console.log('Usage: tsx bench/bpf-overhead.bench.ts  (root, bpftrace, gcc; env BX_ROUNDS=5 BX_SECONDS=3)');
  process.exit(0);
}
const pre = machinePreflight('bpftrace');
if (!pre.ok) {
  console.log(`bpf-overhead: skipped — ${pre.reason}`);
  process.exit(0);
}

interface LoadResult {
  requests: { average: number };
  latency: { p99: number; average: number };
}

/** Closed-loop keep-alive load with µs latencies (autocannon rounds latencies to whole ms: P99 on loopback reads 0). */
async function load(o: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}): Promise<LoadResult> {
  const pool = new Pool(o.url, { connections: o.connections, pipelining: 1 });
  const lat: number[] = [];
  const end = Date.now() + o.duration * 1000;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        const { body } = await pool.request({ path: '/', method: 'GET', headers: o.headers });
        await body.dump();
        lat.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    })
  );
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  await pool.close();
  lat.sort((a, b) => a - b);
  return {
    requests: { average: lat.length / secs },
    latency: { p99: lat[Math.floor(lat.length * 0.99)], average: lat.reduce((a, b) => a + b, 0) / lat.length },
  };
}
const ROUNDS = Number(process.env.BX_ROUNDS ?? smoke(5, 1));
const PARTS = (process.env.BX_PARTS ?? 'http,events,traceparent').split(',');
const SECONDS = Number(process.env.BX_SECONDS ?? smoke(3, 0.5));
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
const gcc = (args: string[]): void => {
  const r = spawnSync('gcc', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
};
gcc([
  '-shared',
  '-fPIC',
  '-O1',
  '-o',
  join(dir, 'libcuda.so.1'),
  join(root, 'tests/integration/bpf-exporter/fake-libcuda.c'),
]);
writeFileSync(
  join(dir, 'gen.c'),
  `
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
}`
);
gcc(['-O1', '-o', join(dir, 'gen'), join(dir, 'gen.c'), `-L${dir}`, '-l:libcuda.so.1', `-Wl,-rpath,${dir}`]);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RunningExporter {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startExporter(probes: string, extraEnv: Record<string, string> = {}): Promise<RunningExporter> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bpf-exporter/src/main.ts')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    // The uprobe files are named: the TLS probe's node binary (this one, as the measured servers run) and the stand-in
    // libcuda. Left to the workload scan, a probe waits for a process to map them and measures nothing meanwhile.
    env: {
      ...process.env,
      HOPSCOPE_BPF_PORT: '0',
      HOPSCOPE_BPF_PROBES: probes,
      HOPSCOPE_BPF_NODE_BINARY: process.execPath,
      HOPSCOPE_BPF_LIBCUDA: join(dir, 'libcuda.so.1'),
      HOPSCOPE_LOG_LEVEL: 'info',
      ...extraEnv,
    },
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
  // Wait until every probe is attached: a probe still waiting would make the B side measure nothing.
  for (let i = 0; ; i++) {
    const h = (await (await fetch(`${url}/health`)).json()) as {
      probes: Array<{ attached: boolean; state: string; name: string; reason?: string }>;
    };
    if (h.probes.every((p) => p.attached)) break;
    if (h.probes.some((p) => p.state === 'restarting' || p.state === 'not_attached'))
      throw new Error(`probe failed: ${JSON.stringify(h.probes)}`);
    if (i >= 200)
      throw new Error(`probes not attached after 20 s: ${JSON.stringify(h.probes.filter((p) => !p.attached))}`);
    await sleep(100);
  }
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGINT');
      }),
  };
}

function httpServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
    const http = require('node:http');
    const s = http.createServer((q, r) => { q.resume(); r.end('{"ok":true}'); });
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  );
  started.push(child);
  return new Promise((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${String(d).trim()}/`, child }))
  );
}

/** CPU seconds (user+sys) of a process and its direct children (bpftrace). */
function cpuSeconds(pid: number): { self: number; children: number } {
  const tick = 100;
  const stat = (p: number): number => {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8');
      const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return (Number(parts[11]) + Number(parts[12])) / tick;
    } catch {
      return 0;
    }
  };
  let children = 0;
  try {
    for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
      children += stat(Number(c));
  } catch {
    /* none */
  }
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
    c.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    c.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`gen exited ${code}`))));
  });
}

const results: Record<string, unknown> = {};
const rows: Array<Record<string, string | number>> = [];
const med = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const row = (
  measure: string,
  a: string | number,
  b: string | number,
  ratio: number | string,
  spread: string,
  rounds: number
): void => {
  rows.push({ measure, A: a, B: b, 'B/A (median)': ratio, spread, rounds });
};
const abLine = (
  r: {
    name: string;
    unit: string;
    a: { label: string; median: number };
    b: { label: string; median: number };
    ratio: { median: number; min: number; max: number };
  },
  rounds: number
): void =>
  row(
    `${r.name} (${r.unit}) A=${r.a.label} B=${r.b.label}`,
    r.a.median,
    r.b.median,
    r.ratio.median,
    `${r.ratio.min.toFixed(3)}–${r.ratio.max.toFixed(3)}`,
    rounds
  );
try {
  const server = await httpServer();
  const origin = server.url.replace(/\/$/, '');
  await load({ url: origin, connections: 10, duration: 1 }); // warm up
  const cannon = (connections: number) => load({ url: origin, connections, duration: SECONDS });

  if (PARTS.includes('http')) {
    // 1. throughput and P99, detached vs default probes attached (the exporter is started before and stopped after
    // B's measured window; A runs with nothing attached).
    const p99: number[][] = [[], []];
    const tp = await abCompare({
      name: 'HTTP throughput, 10 conns keep-alive',
      unit: 'req/s',
      rounds: ROUNDS,
      a: {
        label: 'detached',
        run: async () => {
          const r = await cannon(10);
          p99[0].push(r.latency.p99);
          return r.requests.average;
        },
      },
      b: {
        label: 'default probes',
        run: async () => {
          const e = await startExporter('tcp_connect,tcp_retransmit,tls_handshake,gpu_alloc_fail');
          try {
            const r = await cannon(10);
            p99[1].push(r.latency.p99);
            return r.requests.average;
          } finally {
            await e.stop();
          }
        },
      },
    });
    abLine(tp, ROUNDS);
    const ratios = p99[0].map((a, i) => p99[1][i] / a);
    row(
      'HTTP P99 latency (ms) A=detached B=default probes',
      med(p99[0]),
      med(p99[1]),
      med(ratios),
      `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`,
      ratios.length
    );
    results.throughput = tp;
    results.p99 = { detachedMs: p99[0], attachedMs: p99[1], ratioMedian: med(ratios) };
  }

  if (PARTS.includes('events')) {
    // 2. exporter CPU at 5,000 events/s, side by side with the same exporter idle (alternated ROUNDS times), and
    // 3. counts at 20,000 events/s: calls made vs failures counted (exact: counted in the kernel), per-event records
    //    (capped by the budget), suppressed and lost. The generator reports its calls.
    const e = await startExporter('gpu_alloc_fail');
    const pid = e.child.pid!;
    const counted = (): Promise<number> => metric(e.url, /^hopscope_gpu_alloc_failures_total\{/);
    const suppressed = (): Promise<number> =>
      metric(e.url, /^hopscope_bpf_events_suppressed_total\{probe="gpu_alloc_fail"/);
    const lost = (): Promise<number> => metric(e.url, /^hopscope_bpf_events_lost_total\{probe="gpu_alloc_fail"/);
    const records = async (): Promise<number> => {
      const h = (await (await fetch(`${e.url}/health`)).json()) as { probes: Array<{ name: string; events: number }> };
      return h.probes.find((p) => p.name === 'gpu_alloc_fail')!.events;
    };
    const secs = smoke(5, 1); // a smoke run (bench/lib/ab.ts): 1 s windows
    const window = async (rate: number) => {
      const before = {
        cpu: cpuSeconds(pid),
        counted: await counted(),
        records: await records(),
        suppressed: await suppressed(),
        lost: await lost(),
      };
      const t0 = Date.now();
      const sent = rate ? await runGen(rate, secs) : (await sleep(secs * 1000), 0);
      await sleep(1500); // let the pipe drain and the kernel counts flush (1 s)
      const wall = (Date.now() - t0) / 1000;
      const after = {
        cpu: cpuSeconds(pid),
        counted: await counted(),
        records: await records(),
        suppressed: await suppressed(),
        lost: await lost(),
      };
      return {
        rate,
        seconds: secs,
        sent,
        counted: after.counted - before.counted,
        records: after.records - before.records,
        suppressed: after.suppressed - before.suppressed,
        lost: after.lost - before.lost,
        exporterCpuPctOfCore: (100 * (after.cpu.self - before.cpu.self)) / wall,
        bpftraceCpuPctOfCore: (100 * (after.cpu.children - before.cpu.children)) / wall,
      };
    };
    const idle: Array<Awaited<ReturnType<typeof window>>> = [];
    const busy: Array<Awaited<ReturnType<typeof window>>> = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) {
        idle.push(await window(0));
        busy.push(await window(5000));
      } else {
        busy.push(await window(5000));
        idle.push(await window(0));
      }
    }
    const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
    for (const [what, key] of [
      ['exporter (node)', 'exporterCpuPctOfCore'],
      ['bpftrace', 'bpftraceCpuPctOfCore'],
    ] as const) {
      const a = idle.map((r) => r[key]);
      const b = busy.map((r) => r[key]);
      row(
        `${what} CPU % of a core, A=idle B=5,000 events/s (${secs} s windows)`,
        Number(med(a).toFixed(2)),
        Number(med(b).toFixed(2)),
        '',
        `B ${spread(b)} (A ${spread(a)})`,
        ROUNDS
      );
    }
    const exact = busy.every((r) => r.counted === r.sent && r.records + r.suppressed === r.sent - r.lost);
    row(
      '5,000 events/s: A=sent B=counted (all rounds); records / suppressed / lost (median)',
      busy.reduce((s, r) => s + r.sent, 0),
      busy.reduce((s, r) => s + r.counted, 0),
      exact ? 'exact' : 'NOT exact',
      `${med(busy.map((r) => r.records))} / ${med(busy.map((r) => r.suppressed))} / ${med(busy.map((r) => r.lost))}`,
      ROUNDS
    );
    results.events_5000 = {
      idle,
      busy,
      exporterCpuMedian: med(busy.map((r) => r.exporterCpuPctOfCore)),
      bpftraceCpuMedian: med(busy.map((r) => r.bpftraceCpuPctOfCore)),
    };
    const r20 = await window(20000);
    results.events_20000 = r20;
    row(
      `20,000 events/s, ${secs} s: A=sent B=counted; records / suppressed / lost; CPU % of a core`,
      r20.sent,
      r20.counted,
      r20.counted / r20.sent,
      `${r20.records} / ${r20.suppressed} / ${r20.lost}; exporter ${r20.exporterCpuPctOfCore.toFixed(2)}% + bpftrace ${r20.bpftraceCpuPctOfCore.toFixed(2)}%`,
      1
    );
    await e.stop();
  }

  if (PARTS.includes('traceparent')) {
    // 4. http_traceparent cost per request: 1 connection, sequential requests carrying a traceparent.
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const seq = () => load({ url: origin, connections: 1, duration: SECONDS, headers });
    const lat = await abCompare({
      name: 'mean latency per request, 1 conn',
      unit: 'ms',
      rounds: ROUNDS,
      a: { label: 'detached', run: async () => (await seq()).latency.average },
      b: {
        label: 'http_traceparent 1/1',
        run: async () => {
          const x = await startExporter('http_traceparent', { HOPSCOPE_BPF_TRACEPARENT_SAMPLE: '1' });
          try {
            return (await seq()).latency.average;
          } finally {
            await x.stop();
          }
        },
      },
    });
    abLine(lat, ROUNDS);
    const costUs = (lat.b.median - lat.a.median) * 1000;
    row(
      'http_traceparent cost per request (µs, median B − median A)',
      '',
      Number(costUs.toFixed(1)),
      lat.ratio.median,
      '',
      ROUNDS
    );
    results.traceparent = { ...lat, costPerRequestUs: costUs };
  }
  report('bpf-exporter overhead (side by side)', rows, results);
  server.child.kill();
} finally {
  cleanup();
}
process.exit(0);
