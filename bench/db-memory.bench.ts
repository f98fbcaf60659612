/**
 * The proxy's embedded database (PGlite) and the memory of the process holding it: RSS, V8 heap and external memory
 * (WebAssembly memory and ArrayBuffers) of a fresh Node process, measured after each step:
 *   open      the engine started (a new data dir: initdb first; in memory: from the migrated template)
 *   migrated  the schema migrations applied
 *   workload  1,000 runs registered and finished, 20,000 kernel events kept, the 1,000 runs listed 20 times
 *   idle      6 s later, with nothing to do (the checkpoint timer has looked once)
 * for three databases: `file` (a new data dir, as at the first start), `reopened` (that data dir, workload inside,
 * opened by a new process, as after a restart) and `memory` (no data dir). Each is run with the settings before
 * this benchmark's change (`before`: PostgreSQL's defaults, initdb in the process, the template kept in the
 * process, no checkpoints) and after (`after`: backend-proxy/src/db/pglite.ts as it is), alternated every round.
 *
 * Each measurement is its own Node process started on an esbuild bundle of this file, as the proxy's image runs
 * (node main.mjs, no TypeScript loader, whose ~90 MB would be counted otherwise). The peak (VmHWM) and the Runs
 * list of 1,000 runs (warm, median of 15 calls) are reported too.
 *
 * Usage: npx tsx bench/db-memory.bench.ts [--rounds N]   (default 5, the figures in docs/deploy.md; ~2 min a round)
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pino from 'pino';
import type { Database, Queryable } from '../backend-proxy/src/db/types';
import { checksum, migrate, MIGRATIONS } from '../backend-proxy/src/db/migrations';
import { servePglite, startPglite } from '../backend-proxy/src/db/pglite';
import { RunsService } from '../backend-proxy/src/runs/service';
import {
  bundleChild,
  EVENTS,
  hwm,
  mem,
  MiB,
  RUNS,
  runChild as runMeasured,
  workload,
  writeResult,
  type Mem,
} from '../tests/support/pglite-memory';
import { median, report, smoke, SMOKE } from './lib/ab';

const CHILD_ENV = 'HOPSCOPE_DB_MEMORY_CHILD';
const IDLE_MS = smoke(6000, 0);
const PHASES = ['open', 'migrated', 'workload', 'idle'] as const;
type Phase = (typeof PHASES)[number];
type Variant = 'before' | 'after';
type Scenario = 'file' | 'reopened' | 'memory';

interface ChildResult {
  start: Mem;
  phases: Record<Phase, Mem>;
  hwm: number;
  openMs: number;
  listMs: number;
  settings: Record<string, string>;
}
interface ChildArgs {
  variant: Variant;
  scenario: Scenario;
  dataDir?: string;
  beforeTemplate: string;
}

// ---- the child: one database, one variant, one process ----

/** The settings before: PGlite's defaults (PostgreSQL's: shared_buffers 128MB…) and synchronous_commit on. */
const BEFORE_PARAMS = [...PGlite.defaultStartParams, '-c', 'synchronous_commit=on'];

/** The old openPglite, step by step: PGlite.create in this process, migrations, a Database around it. */
async function openBefore(a: ChildArgs, log: pino.Logger, step: () => void): Promise<Database> {
  const pgdata = a.dataDir ? join(a.dataDir, 'pgdata') : undefined;
  const loadDataDir = pgdata ? undefined : new Blob([readFileSync(a.beforeTemplate)]); // the old code kept it in the process
  const pg = await PGlite.create({
    dataDir: pgdata,
    loadDataDir,
    relaxedDurability: false,
    startParams: BEFORE_PARAMS,
  });
  step();
  const wrap = (r: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(sql: string, params?: readonly unknown[]) {
      const x = await r.query<R>(sql, params ? [...params] : undefined);
      return { rows: x.rows, rowCount: Math.max(x.affectedRows ?? 0, x.rows.length) };
    },
    async exec(sql: string) {
      await r.exec(sql);
    },
  });
  const version = await migrate((fn) => pg.transaction((tx) => fn(wrap(tx))), log);
  const q = wrap(pg);
  (globalThis as { keptTemplate?: Blob }).keptTemplate = loadDataDir;
  return {
    kind: 'pglite',
    where: pgdata ?? 'memory',
    schemaVersion: version,
    ...q,
    tx: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    health: async () => ({ source: 'database', ok: true }),
    close: () => pg.close(),
  };
}

async function openAfter(a: ChildArgs, log: pino.Logger, step: () => void): Promise<Database> {
  const pgdata = a.dataDir ? join(a.dataDir, 'pgdata') : undefined;
  const { pg, fromTemplate } = await startPglite(pgdata, log);
  step();
  return servePglite(pg, { pgdata, fromTemplate, log });
}

async function listMs(db: Database, log: pino.Logger): Promise<number> {
  const runs = new RunsService({ db, log });
  for (let i = 0; i < 5; i++) await runs.list({ limit: RUNS });
  const xs: number[] = [];
  for (let i = 0; i < smoke(15, 1); i++) {
    const t = performance.now();
    JSON.stringify(await runs.list({ limit: RUNS }));
    xs.push(performance.now() - t);
  }
  return median(xs);
}

async function child(a: ChildArgs): Promise<void> {
  const log = pino({ level: 'silent' });
  if (a.dataDir) mkdirSync(a.dataDir, { recursive: true }); // as openPglite does (it also locks it)
  const start = mem();
  const phases = {} as Record<Phase, Mem>;
  const t0 = performance.now();
  let openMs = 0;
  const db = await (a.variant === 'before' ? openBefore : openAfter)(a, log, () => {
    openMs = performance.now() - t0;
    phases.open = mem();
  });
  phases.migrated = mem();
  if (a.scenario !== 'reopened')
    await workload(db, log, {
      runIdPrefix: 'mem-',
      runs: smoke(RUNS, 10),
      events: smoke(EVENTS, 1000),
      eventDetail: (i) => ({ seq: i, saddr: '10.0.0.1:41000', daddr: '10.0.0.2:8000' }),
    });
  const list = await listMs(db, log);
  phases.workload = mem();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  phases.idle = mem();
  const settings: Record<string, string> = {};
  for (const s of ['shared_buffers', 'wal_buffers', 'maintenance_work_mem', 'wal_segment_size', 'full_page_writes']) {
    settings[s] = String(Object.values((await db.query(`SHOW ${s}`)).rows[0])[0]);
  }
  const out: ChildResult = { start, phases, hwm: hwm(), openMs, listMs: list, settings };
  writeResult(out);
  await db.close();
}

// ---- the parent ----

function runChild(bundle: string, a: ChildArgs): Promise<ChildResult> {
  return runMeasured<ChildResult>(bundle, { envVar: CHILD_ENV, args: a, what: `${a.variant} ${a.scenario}:` });
}

/**
 * The in-memory template as the old code made it (initdb in this process, migrated, dumped), made once per PGlite
 * build, settings and migrations and kept beside the child's bundle: it is set-up, not measured, and its initdb was
 * most of a smoke run's CPU. Answers the file's path.
 */
async function cachedBeforeTemplate(): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const key = createHash('sha256')
    .update(
      JSON.stringify([entry, statSync(entry).size, statSync(entry).mtimeMs, BEFORE_PARAMS, MIGRATIONS.map(checksum)])
    )
    .digest('hex')
    .slice(0, 16);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const file = join(root, 'node_modules', '.cache', 'hopscope', `db-memory-before-template-${key}.tar`);
  if (existsSync(file)) return file;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}`;
  try {
    await makeBeforeTemplate(tmp);
    renameSync(tmp, file); // another run may have made it meanwhile: the same bytes' worth
  } finally {
    rmSync(tmp, { force: true });
  }
  return file;
}

/** The in-memory template as the old code made it: initdb in this process, migrated, dumped. */
async function makeBeforeTemplate(file: string): Promise<void> {
  const log = pino({ level: 'silent' });
  const pg = await PGlite.create({ relaxedDurability: false, startParams: BEFORE_PARAMS });
  const wrap = (r: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(sql: string, params?: readonly unknown[]) {
      const x = await r.query<R>(sql, params ? [...params] : undefined);
      return { rows: x.rows, rowCount: x.rows.length };
    },
    async exec(sql: string) {
      await r.exec(sql);
    },
  });
  await migrate((fn) => pg.transaction((tx) => fn(wrap(tx))), log);
  writeFileSync(file, new Uint8Array(await (await pg.dumpDataDir('none')).arrayBuffer()));
  await pg.close();
}

async function parent(): Promise<void> {
  const ri = process.argv.indexOf('--rounds');
  const rounds = ri > 0 ? Math.max(1, Number(process.argv[ri + 1])) : smoke(5, 1);
  const bundle = await bundleChild(fileURLToPath(import.meta.url), 'db-memory-bench');
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-bench-dbmem-'));
  const scenarios: Scenario[] = ['file', 'reopened', 'memory'];
  const results: Record<Scenario, Record<Variant, ChildResult[]>> = {
    file: { before: [], after: [] },
    reopened: { before: [], after: [] },
    memory: { before: [], after: [] },
  };
  try {
    const beforeTemplate = await cachedBeforeTemplate();
    // The 'after' template (the temp dir's, as every proxy and test makes it): made once here if absent, not counted
    // (a smoke run, whose figures are not read, lets its first in-memory child make it).
    if (!SMOKE) await runChild(bundle, { variant: 'after', scenario: 'memory', beforeTemplate });
    for (let r = 0; r < rounds; r++) {
      const order: Variant[] = r % 2 ? ['after', 'before'] : ['before', 'after'];
      for (const v of order) {
        const dataDir = join(dir, `r${r}-${v}`, 'data');
        results.file[v].push(await runChild(bundle, { variant: v, scenario: 'file', dataDir, beforeTemplate }));
        results.reopened[v].push(await runChild(bundle, { variant: v, scenario: 'reopened', dataDir, beforeTemplate }));
        rmSync(dirname(dataDir), { recursive: true, force: true });
      }
      for (const v of order)
        results.memory[v].push(await runChild(bundle, { variant: v, scenario: 'memory', beforeTemplate }));
      console.log(`round ${r + 1}/${rounds} done`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const mib = (x: number): number => Math.round((x / MiB) * 10) / 10;
  const stat = (xs: number[]): string => `${mib(median(xs))} (${mib(Math.min(...xs))}–${mib(Math.max(...xs))})`;
  const rows: Array<Record<string, string | number>> = [];
  for (const s of scenarios) {
    const steps: Array<{ name: string; pick: (c: ChildResult) => Mem }> = [
      { name: 'start', pick: (c) => c.start },
      ...PHASES.filter((p) => !(s === 'reopened' && p === 'workload')).map((p) => ({
        name: p,
        pick: (c: ChildResult) => c.phases[p],
      })),
    ];
    for (const st of steps) {
      const b = results[s].before.map(st.pick);
      const a = results[s].after.map(st.pick);
      rows.push({
        db: s,
        step: st.name,
        'RSS before (MiB)': stat(b.map((m) => m.rss)),
        'RSS after (MiB)': stat(a.map((m) => m.rss)),
        'heap b/a': `${mib(median(b.map((m) => m.heapUsed)))}/${mib(median(a.map((m) => m.heapUsed)))}`,
        'external b/a': `${mib(median(b.map((m) => m.external)))}/${mib(median(a.map((m) => m.external)))}`,
        'arrayBuffers b/a': `${mib(median(b.map((m) => m.arrayBuffers)))}/${mib(median(a.map((m) => m.arrayBuffers)))}`,
      });
    }
    rows.push({
      db: s,
      step: 'peak (VmHWM)',
      'RSS before (MiB)': stat(results[s].before.map((c) => c.hwm)),
      'RSS after (MiB)': stat(results[s].after.map((c) => c.hwm)),
      'heap b/a': '',
      'external b/a': '',
      'arrayBuffers b/a': '',
    });
  }
  const ms = (xs: number[]): string =>
    `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`;
  const ms1 = (xs: number[]): string =>
    `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
  const timing = scenarios.map((s) => ({
    db: s,
    'open ms before': ms(results[s].before.map((c) => c.openMs)),
    'open ms after': ms(results[s].after.map((c) => c.openMs)),
    'list 1,000 runs ms before': ms1(results[s].before.map((c) => c.listMs)),
    'list 1,000 runs ms after': ms1(results[s].after.map((c) => c.listMs)),
  }));
  report(
    `PGlite process memory, before/after the settings (median (min–max) of ${rounds} alternated rounds, MiB)`,
    rows,
    {
      rounds,
      runs: RUNS,
      events: EVENTS,
      idleMs: IDLE_MS,
      settings: {
        before: results.file.before[0].settings,
        after: results.file.after[0].settings,
        afterMemory: results.memory.after[0].settings,
      },
      rssMiB: Object.fromEntries(
        scenarios.map((s) => [
          s,
          Object.fromEntries(
            (['before', 'after'] as const).map((v) => [
              v,
              {
                start: results[s][v].map((c) => mib(c.start.rss)),
                ...Object.fromEntries(PHASES.map((p) => [p, results[s][v].map((c) => mib(c.phases[p].rss))])),
                peak: results[s][v].map((c) => mib(c.hwm)),
              },
            ])
          ),
        ])
      ),
    }
  );
  report('open and Runs-list times (median (min–max), ms)', timing, {
    openMs: Object.fromEntries(
      scenarios.map((s) => [
        s,
        {
          before: results[s].before.map((c) => Math.round(c.openMs)),
          after: results[s].after.map((c) => Math.round(c.openMs)),
        },
      ])
    ),
    listMs: Object.fromEntries(
      scenarios.map((s) => [
        s,
        { before: results[s].before.map((c) => c.listMs), after: results[s].after.map((c) => c.listMs) },
      ])
    ),
  });
}

const childArgs = process.env[CHILD_ENV];
if (childArgs) await child(JSON.parse(childArgs) as ChildArgs);
else await parent();
