/**
 * Embedded PGlite (PostgreSQL compiled to WASM, in this process), file-backed in `<dataDir>/pgdata`.
 *
 * Durability: PGlite starts PostgreSQL with fsync off (`-F`) and its Node filesystem has no fsync
 * (electric-sql/pglite#1107), but every commit writes its WAL with plain write() calls before the query returns
 * (synchronous_commit=on, set explicitly). So what a call acknowledged is in the OS page cache and survives the
 * proxy being killed (SIGKILL included: tests/integration/db/durability.test.ts), and crash recovery replays it at
 * the next open. It does NOT survive an OS crash or power loss: for that, use PostgreSQL (HOPSCOPE_DATABASE_URL).
 * `relaxedDurability` stays false (it would let queries return before the filesystem sync).
 *
 * Memory (bench/db-memory.bench.ts measures it; docs/deploy.md has the figures): PGlite zeroes PostgreSQL's shared
 * memory at start, so all of `shared_buffers` is resident from the first query, and its WebAssembly memory never
 * shrinks. PGLITE_SETTINGS sizes it for this workload (a few thousand runs, tens of thousands of kernel events,
 * small queries) instead of PostgreSQL's defaults. initdb (a new data dir, or the first in-memory database on this
 * machine) runs in a child process: in this process its second PostgreSQL instance and a copy of that instance's
 * memory (~430 MB) stayed until a full garbage collection, which an idle proxy may never run. And PGlite's
 * single-user PostgreSQL never checkpoints by itself (no checkpointer, no max_wal_size trigger): the WAL would grow
 * with every write for as long as the process lives (on disk for a data dir, with crash recovery replaying all of it;
 * in this process's memory for an in-memory database), so a timer checkpoints once enough WAL was written.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openAsBlob,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type pino from 'pino';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import type { Database, Queryable, QueryResult } from './types';
import { DatabaseLockedError, DatabaseUnavailableError } from './errors';
import { MIGRATIONS, checksum, migrate } from './migrations';
import { probe } from './probe';

type Runner = Pick<Transaction, 'query' | 'exec'>;

function wrap(run: () => Runner, isOpen: () => boolean, used: () => void = () => {}): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      if (!isOpen()) throw new DatabaseUnavailableError('the embedded database is closed');
      used();
      const r = await run().query<R>(sql, params ? [...params] : undefined);
      return { rows: r.rows, rowCount: Math.max(r.affectedRows ?? 0, r.rows.length) };
    },
    async exec(sql: string): Promise<void> {
      if (!isOpen()) throw new DatabaseUnavailableError('the embedded database is closed');
      used();
      await run().exec(sql);
    },
  };
}

/**
 * PostgreSQL settings of the embedded database, on top of PGlite's own (`PGlite.defaultStartParams`).
 * - shared_buffers 32MB (default 128MB, all of it resident): the Runs list's working set (the newest 1,000 runs and
 *   their workers, ~7 MB) and the hot kernel-evidence pages fit with room; 16MB made the list of 1,000 runs twice as
 *   slow once 3,000 were stored (pages re-read through the filesystem). wal_buffers follows it (1/32: 1MB).
 * - maintenance_work_mem 16MB (default 64MB): what an index build or VACUUM may take, and keep, since WebAssembly
 *   memory never shrinks; index builds on tens of thousands of rows need a few MB.
 * - synchronous_commit on: a query returns after its commit's WAL is written (see above).
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = {
  synchronous_commit: 'on',
  shared_buffers: '32MB',
  maintenance_work_mem: '16MB',
};
/**
 * In memory only, where nothing survives the process: no full-page images (they only serve crash recovery), and
 * 1 MB WAL segments (initdb's --wal-segsize) of which at most 16 MB are kept for reuse after a checkpoint.
 */
export const PGLITE_MEMORY_SETTINGS: Readonly<Record<string, string>> = {
  full_page_writes: 'off',
  min_wal_size: '2MB',
  max_wal_size: '16MB',
};
/** initdb with the small shared_buffers too (its peak is two instances of it); in memory, 1 MB WAL segments. */
const INITDB_PARAMS = ['-c', `shared_buffers=${PGLITE_SETTINGS.shared_buffers}`];
const INITDB_MEMORY_PARAMS = [...INITDB_PARAMS, '--wal-segsize=1'];
/** CHECKPOINT once this much WAL was written since the last one; checked every CHECKPOINT_CHECK_MS after use. */
export const CHECKPOINT_AFTER_WAL_BYTES = { file: 64 * 1048576, memory: 4 * 1048576 } as const;
const CHECKPOINT_CHECK_MS = 5000;

const flags = (settings: Readonly<Record<string, string>>): string[] =>
  Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
const FILE_START_PARAMS = [...PGlite.defaultStartParams, ...flags(PGLITE_SETTINGS)];
const MEMORY_START_PARAMS = [...FILE_START_PARAMS, ...flags(PGLITE_MEMORY_SETTINGS)];

/**
 * Runs initdb in a child Node process (the same PGlite package, resolved as this module resolves it): a new cluster
 * in `dataDir`, or an in-memory one written as a tarball to `tarball`. Everything it used goes back to the OS when
 * the child exits.
 */
const INITDB_CHILD = `
import { writeFileSync } from 'node:fs';
const { PGlite } = await import(process.argv[1]);
const o = JSON.parse(process.argv[2]);
const pg = await PGlite.create({ dataDir: o.dataDir, initDbStartParams: o.initdb });
if (o.tarball) writeFileSync(o.tarball, new Uint8Array(await (await pg.dumpDataDir('none')).arrayBuffer()));
await pg.close();
`;

function initdbInChild(o: { dataDir: string } | { tarball: string }): Promise<void> {
  const args = { ...o, initdb: 'tarball' in o ? INITDB_MEMORY_PARAMS : INITDB_PARAMS };
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', INITDB_CHILD, import.meta.resolve('@electric-sql/pglite'), JSON.stringify(args)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      }
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `initdb (child process) ${signal ? `killed by ${signal}` : `exited ${code}`}: ${stderr.trim().split('\n').slice(-3).join(' ')}`
          )
        );
    });
  });
}

/** A new cluster in `pgdata`: made beside it by initdb in a child process, moved in place once complete. */
async function initdbDataDir(pgdata: string, log: pino.Logger): Promise<void> {
  const fresh = `${pgdata}.initdb`;
  rmSync(fresh, { recursive: true, force: true });
  try {
    const template = await clusterTemplate();
    if (template) cpSync(template, fresh, { recursive: true });
    else await initdbInChild({ dataDir: fresh });
  } catch (err) {
    // PGlite.create runs initdb in this process instead (it may hold ~430 MB more until a full GC).
    rmSync(fresh, { recursive: true, force: true });
    log.warn({ err: (err as Error).message }, 'database: initdb in a child process failed; running it in this process');
    return;
  }
  try {
    rmdirSync(pgdata); // only if empty: a directory holding anything is never replaced
  } catch {
    /* absent, or not empty: then the rename below refuses */
  }
  try {
    renameSync(fresh, pgdata);
  } catch (err) {
    rmSync(fresh, { recursive: true, force: true });
    throw new Error(`${pgdata} holds files but no PostgreSQL cluster (no PG_VERSION): ${(err as Error).message}`);
  }
}

/**
 * A new data dir starts as a copy of an empty cluster that initdb made once on this machine (in the private template
 * directory below, named by the PGlite build and initdb's settings) rather than running initdb for each: initdb is
 * most of a first start's CPU (bench/db-memory.bench.ts, "open ms" of `file` against `reopened`), and the test suite
 * makes dozens of data dirs. The copy is what initdb would have written, but for the cluster's system identifier,
 * which only replication reads. Undefined (initdb runs instead) where the private directory cannot be made.
 */
async function clusterTemplate(): Promise<string | undefined> {
  if (!templateFile()) return undefined;
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const build = createHash('sha256')
    .update(JSON.stringify([entry, statSync(entry).size, statSync(entry).mtimeMs, INITDB_PARAMS]))
    .digest('hex')
    .slice(0, 16);
  const dir = join(templateDir!, `hopscope-pglite-cluster-${build}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  const fresh = `${dir}.${process.pid}.${Date.now()}`;
  try {
    await initdbInChild({ dataDir: fresh });
    renameSync(fresh, dir); // another process may have made it meanwhile: then this one is dropped
  } catch {
    /* the other's stands, or none: checked below */
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  return existsSync(join(dir, 'PG_VERSION')) ? dir : undefined;
}

/**
 * In-memory databases (tests, a proxy without a data dir) start from a migrated empty cluster instead of running
 * initdb each time (about 0.3 s instead of 1.5-2.5 s): a tarball in the temp dir for the next process, named by the
 * format of its cluster and the migrations it contains, read again at each open (kept in this process only when it
 * cannot be written there). One that does not load (another PGlite version) is rebuilt.
 */
const TEMPLATE_NAME = `hopscope-pglite-template-w1-${MIGRATIONS.map(checksum).join('').slice(0, 16)}-${MIGRATIONS.length}.tar`;

/**
 * The template's directory: private to this user (`hopscope-<uid>` in the temp dir, mode 0700, owned by us, not a
 * link), so another user of a shared /tmp cannot plant a cluster this proxy would load, nor read ours. Undefined when
 * it cannot be made so (the template is then kept in this process only).
 */
function privateTemplateDir(): string | undefined {
  const uid = process.getuid?.();
  const dir = join(tmpdir(), `hopscope-${uid ?? 'user'}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.isSymbolicLink()) return undefined;
    if (uid !== undefined && st.uid !== uid) return undefined;
    if ((st.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

let templateDir: string | null | undefined;
function templateFile(): string | undefined {
  if (templateDir === undefined) templateDir = privateTemplateDir() ?? null;
  return templateDir ? join(templateDir, TEMPLATE_NAME) : undefined;
}
let keptTemplate: Blob | undefined;

/** Read from the file as PGlite loads it: one copy in memory at a time, not three. */
async function readTemplate(): Promise<Blob | undefined> {
  if (keptTemplate) return keptTemplate;
  const file = templateFile();
  return file && existsSync(file) ? openAsBlob(file).catch(() => undefined) : undefined;
}

async function keepTemplate(pg: PGlite, log: pino.Logger): Promise<void> {
  let dump: Blob | undefined;
  try {
    dump = await pg.dumpDataDir('none');
    const file = templateFile();
    if (!file) throw new Error('no private temp directory for it');
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, new Uint8Array(await dump.arrayBuffer()), { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    keptTemplate = dump;
    log.debug(
      { err: (err as Error).message },
      'database: could not write the in-memory template to the temp dir (kept in this process)'
    );
  }
}

async function createMemory(log: pino.Logger): Promise<{ pg: PGlite; fromTemplate: boolean }> {
  const opts = { relaxedDurability: false, startParams: MEMORY_START_PARAMS };
  const t = await readTemplate();
  if (t) {
    try {
      return { pg: await PGlite.create({ ...opts, loadDataDir: t }), fromTemplate: true };
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'database: the in-memory template did not load; rebuilding it');
      keptTemplate = undefined;
      const file = templateFile();
      if (file) rmSync(file, { force: true });
    }
  }
  const tarball = join(
    templateFile() ? templateDir! : tmpdir(),
    `hopscope-pglite-initdb-${process.pid}-${Date.now()}.tar`
  );
  try {
    await initdbInChild({ tarball });
    return { pg: await PGlite.create({ ...opts, loadDataDir: await openAsBlob(tarball) }), fromTemplate: false };
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'database: initdb in a child process failed; running it in this process');
    return { pg: await PGlite.create({ ...opts, initDbStartParams: INITDB_MEMORY_PARAMS }), fromTemplate: false };
  } finally {
    rmSync(tarball, { force: true });
  }
}

/**
 * The engine, started with PGLITE_SETTINGS (migrations not applied): `<pgdata>` (made by initdb in a child process
 * when it holds no cluster yet) or in memory. openPglite's first half (then servePglite).
 */
export async function startPglite(
  pgdata: string | undefined,
  log: pino.Logger
): Promise<{ pg: PGlite; fromTemplate: boolean }> {
  if (!pgdata) return createMemory(log);
  if (!existsSync(join(pgdata, 'PG_VERSION'))) await initdbDataDir(pgdata, log);
  return {
    pg: await PGlite.create({
      dataDir: pgdata,
      relaxedDurability: false,
      startParams: FILE_START_PARAMS,
      initDbStartParams: INITDB_PARAMS,
    }),
    fromTemplate: false,
  };
}

/** Every CHECKPOINT_CHECK_MS after use: CHECKPOINT when `limitBytes` or more of WAL were written since the last one. */
function checkpointer(
  pg: PGlite,
  limitBytes: number,
  log: pino.Logger
): { used: () => void; stop: () => Promise<void> } {
  let used = false;
  let running: Promise<void> | undefined;
  const check = async (): Promise<void> => {
    const r = await pg.query<{ bytes: number }>(
      'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()'
    );
    if ((r.rows[0]?.bytes ?? 0) >= limitBytes) await pg.exec('CHECKPOINT');
  };
  const timer = setInterval(() => {
    if (!used || running) return;
    used = false;
    running = check()
      .catch((err: Error) =>
        log.debug({ err: err.message }, 'database: checkpoint check failed (tried again after the next use)')
      )
      .finally(() => {
        running = undefined;
      });
  }, CHECKPOINT_CHECK_MS);
  timer.unref();
  return {
    used: () => {
      used = true;
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export async function openPglite(dataDir: string | undefined, log: pino.Logger): Promise<Database> {
  let lock: DataDirLock | undefined;
  const pgdata = dataDir ? join(dataDir, 'pgdata') : undefined;
  if (dataDir) {
    try {
      mkdirSync(dataDir, { recursive: true });
      lock = lockDataDir(dataDir);
    } catch (err) {
      if (err instanceof DatabaseLockedError) throw err;
      throw new Error(
        `the data dir ${dataDir} cannot be used: ${(err as Error).message} (HOPSCOPE_DATA_DIR must be a directory this proxy may write)`
      );
    }
    if (lock.tookOver)
      log.warn(
        { previous: lock.tookOver, dataDir },
        'database: the previous proxy on this data dir did not shut down cleanly; recovering'
      );
  }
  let started: { pg: PGlite; fromTemplate: boolean };
  try {
    started = await startPglite(pgdata, log);
  } catch (err) {
    lock?.release();
    throw new Error(
      `could not open the embedded database in ${pgdata ?? 'memory'}: ${(err as Error).message} (a data dir made by an incompatible PGlite version, or damaged files?)`
    );
  }
  return servePglite(started.pg, { pgdata, fromTemplate: started.fromTemplate, log, release: () => lock?.release() });
}

/**
 * A started engine as the proxy's Database: migrations applied, the checkpoint timer running; `release` after it
 * closed (the data dir's lock). openPglite's second half; the memory benchmark calls it after startPglite.
 */
export async function servePglite(
  pg: PGlite,
  o: { pgdata?: string; fromTemplate: boolean; log: pino.Logger; release?: () => void }
): Promise<Database> {
  const { pgdata, log } = o;
  const release = o.release ?? (() => {});
  let open = true;
  const ckpt = checkpointer(pg, pgdata ? CHECKPOINT_AFTER_WAL_BYTES.file : CHECKPOINT_AFTER_WAL_BYTES.memory, log);
  const q = wrap(
    () => pg,
    () => open,
    ckpt.used
  );
  let version: number;
  try {
    version = await migrate(
      (fn) =>
        pg.transaction((tx) =>
          fn(
            wrap(
              () => tx,
              () => open,
              ckpt.used
            )
          )
        ),
      log
    );
  } catch (err) {
    await ckpt.stop();
    await pg.close().catch(() => {});
    release();
    throw err;
  }
  if (!pgdata && !o.fromTemplate) await keepTemplate(pg, log);
  log.info({ where: pgdata ?? 'memory', schemaVersion: version }, 'database: embedded PGlite open');
  return {
    kind: 'pglite',
    where: pgdata ?? 'memory',
    schemaVersion: version,
    query: q.query,
    exec: q.exec,
    tx: (fn) => {
      if (!open) return Promise.reject(new DatabaseUnavailableError('the embedded database is closed'));
      return pg.transaction((tx) =>
        fn(
          wrap(
            () => tx,
            () => open,
            ckpt.used
          )
        )
      );
    },
    health: () =>
      open ? probe(() => pg.query('SELECT 1')) : Promise.resolve({ source: 'database', ok: false, error: 'closed' }),
    async close() {
      if (!open) return;
      open = false;
      try {
        await ckpt.stop();
        await pg.close();
      } finally {
        release();
      }
    },
  };
}
