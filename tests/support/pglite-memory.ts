/**
 * The measurement shared by bench/db-memory.bench.ts and tests/integration/db/pglite-memory.test.ts: a fresh Node
 * process (a child, started on an esbuild bundle of the caller's file, as the proxy's image runs node main.mjs) holds
 * the proxy's embedded database, runs the workload (RUNS finished runs, EVENTS kernel events), takes its memory at
 * chosen points and its peak (VmHWM), and writes one `RESULT {json}` line that the parent reads back.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pino from 'pino';
import type { Database } from '../../backend-proxy/src/db/types';
import { insertKernelEvents } from '../../backend-proxy/src/db/kernel-evidence-repo';
import { RunsService } from '../../backend-proxy/src/runs/service';
import { finish, latencies, registration } from '../integration/db/run-fixtures';

export const RUNS = 1000;
export const EVENTS = 20_000;
export const MiB = 1048576;

export interface Mem {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** This process's memory now. */
export const mem = (): Mem => {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
};

/** This process's peak RSS so far (VmHWM), bytes. */
export const hwm = (): number =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;

/**
 * The workload: RUNS runs registered and finished (10 at a time, a minute apart, named `${runIdPrefix}${i}`), then
 * EVENTS tcp_retransmit kernel events in batches of 1,000, each with `eventDetail(i)` as its detail (`runs`/`events`
 * to do fewer: the bench's smoke run).
 */
export async function workload(
  db: Database,
  log: pino.Logger,
  o: { runIdPrefix: string; eventDetail: (i: number) => Record<string, unknown>; runs?: number; events?: number }
): Promise<void> {
  const nRuns = o.runs ?? RUNS;
  const nEvents = o.events ?? EVENTS;
  const runs = new RunsService({ db, log });
  const fin = finish('w1', latencies(500, 300));
  const t0 = Date.now() - nRuns * 60_000;
  const one = async (i: number): Promise<void> => {
    const runId = `${o.runIdPrefix}${i}`;
    await runs.register(registration(runId, 'w1', { startMs: t0 + i * 60_000 }));
    await runs.finish(runId, { ...fin, endMs: t0 + i * 60_000 + 30_000 });
  };
  for (let i = 0; i < nRuns; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => one(i + j)));
  const T = Date.now() - 3600_000;
  for (let b = 0; b < nEvents / 1000; b++) {
    await insertKernelEvents(
      db,
      Array.from({ length: 1000 }, (_, k) => {
        const i = b * 1000 + k;
        return {
          ts: T + i * 10 + 0.25,
          type: 'tcp_retransmit',
          pid: 1000 + (i % 7),
          comm: 'python',
          pod: `rag-${i % 13}`,
          namespace: 'chain',
          node: 'node-a',
          detail: o.eventDetail(i),
          mode: 'live',
        };
      })
    );
  }
}

/** The child's answer to its parent: one line on stdout. */
export function writeResult(result: unknown): void {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/**
 * `entry` bundled as the proxy's image bundles main.ts, to node_modules/.cache/hopscope/`name`.mjs, where Node
 * resolves the PGlite package from the repository's node_modules.
 */
export async function bundleChild(entry: string, name: string): Promise<string> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const outfile = join(root, 'node_modules', '.cache', 'hopscope', `${name}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile,
    logLevel: 'error',
    external: ['@electric-sql/pglite', 'esbuild'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return outfile;
}

/**
 * Runs `bundle` in a new Node process (with `nodeArgs`), its arguments as JSON in the environment variable `envVar`;
 * answers the child's RESULT, or rejects with `${what} exited ${code}: ` and the end of its stderr.
 */
export function runChild<R>(
  bundle: string,
  o: { envVar: string; args: unknown; nodeArgs?: string[]; what: string }
): Promise<R> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...(o.nodeArgs ?? []), bundle], {
      env: { ...process.env, [o.envVar]: JSON.stringify(o.args) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    c.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    c.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)) as R);
      else reject(new Error(`${o.what} exited ${code}: ${err}`));
    });
  });
}
