/**
 * The Runs page's data with 1,000 stored runs, warm: `runs.list()` (all 1,000, and the first page of 100) and one
 * run's record, each answered and serialised as the route sends it, on embedded PGlite (A) and a real PostgreSQL (B)
 * side by side. The budget for the whole page is 300 ms warm; this is the database's share of it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openDatabase, type Database } from '../backend-proxy/src/db/database';
import { RunsService } from '../backend-proxy/src/runs/service';
import { postgresSkipReason, startPostgres } from '../tests/support/postgres';
import { finish, latencies, registration } from '../tests/integration/db/run-fixtures';
import { abCompare, abRow, median, report, smoke } from './lib/ab';

const RUNS = smoke(1000, 10);
const CALLS = smoke(15, 1);
const log = pino({ level: 'silent' });

async function seed(runs: RunsService): Promise<void> {
  const fin = finish('w1', latencies(500, 300));
  const t0 = Date.now() - RUNS * 60_000;
  const one = async (i: number): Promise<void> => {
    const runId = `bench-${i}`;
    await runs.register(registration(runId, 'w1', { startMs: t0 + i * 60_000 }));
    if (i % 20) await runs.finish(runId, { ...fin, endMs: t0 + i * 60_000 + 30_000 });
  };
  for (let i = 0; i < RUNS; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => one(i + j)));
}

/** Median of CALLS timed calls (ms), each answer serialised as the route would. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    JSON.stringify(await fn());
    xs.push(performance.now() - t);
  }
  return median(xs);
}

const skip = postgresSkipReason();
if (skip) {
  console.log(`runs-list: skipped: ${skip}`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'hopscope-bench-runs-'));
const pgServer = await startPostgres();
const dbs: Database[] = [];
try {
  const lite = await openDatabase({ dataDir: join(dir, 'data'), log });
  const pg = await openDatabase({ databaseUrl: await pgServer.createDatabase('bench'), log });
  dbs.push(lite, pg);
  const a = new RunsService({ db: lite, log });
  const b = new RunsService({ db: pg, log });
  const s0 = performance.now();
  await seed(a);
  const seedA = performance.now() - s0;
  const s1 = performance.now();
  await seed(b);
  const seedB = performance.now() - s1;
  // Warm both: plans cached, pages in memory.
  for (const r of [a, b]) for (let i = 0; i < 5; i++) await r.list({ limit: RUNS });

  const measures: Array<{ name: string; call: (r: RunsService) => Promise<unknown> }> = [
    { name: `list all ${RUNS} runs`, call: (r) => r.list({ limit: RUNS }) },
    { name: 'list first page (100)', call: (r) => r.list({ limit: 100 }) },
    { name: 'one run record', call: (r) => r.get(`bench-${Math.floor(RUNS / 2) + 1}`) },
  ];
  const results = [];
  for (const m of measures) {
    results.push(
      await abCompare({
        name: m.name,
        unit: 'ms',
        rounds: 6,
        a: { label: 'PGlite', run: () => timed(() => m.call(a)) },
        b: { label: 'PostgreSQL', run: () => timed(() => m.call(b)) },
      })
    );
  }
  const rows = results.map(abRow);
  report(
    `runs list with ${RUNS} stored runs, warm (median of ${CALLS} calls per round; budget for the page: 300 ms)`,
    rows,
    {
      runs: RUNS,
      seedMs: { pglite: Math.round(seedA), postgres: Math.round(seedB) },
      results,
    }
  );
  const worst = Math.max(...results.map((r) => Math.max(r.a.median, r.b.median)));
  console.log(
    `\nseeding ${RUNS} runs (register + finish): PGlite ${(seedA / 1000).toFixed(1)} s, PostgreSQL ${(seedB / 1000).toFixed(1)} s`
  );
  console.log(`slowest median: ${worst.toFixed(1)} ms ${worst <= 300 ? '≤' : '>'} 300 ms budget`);
} finally {
  for (const d of dbs) await d.close().catch(() => {});
  await pgServer.close();
  rmSync(dir, { recursive: true, force: true });
}
