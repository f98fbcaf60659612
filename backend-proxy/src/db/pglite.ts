/**
 * Embedded PGlite (PostgreSQL compiled to WASM, in this process), file-backed in `<dataDir>/pgdata`.
 *
 * Durability: PGlite starts PostgreSQL with fsync off (`-F`) and its Node filesystem has no fsync
 * (electric-sql/pglite#1107), but every commit writes its WAL with plain write() calls before the query returns
 * (synchronous_commit=on, set explicitly). So what a call acknowledged is in the OS page cache and survives the
 * proxy being killed (SIGKILL included: tests/integration/db/durability.test.ts), and crash recovery replays it at
 * the next open. It does NOT survive an OS crash or power loss: for that, use PostgreSQL (HOPSCOPE_DATABASE_URL).
 * `relaxedDurability` stays false (it would let queries return before the filesystem sync).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type pino from 'pino';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import type { Database, Queryable, QueryResult } from './types';
import { DatabaseLockedError, DatabaseUnavailableError } from './errors';
import { MIGRATIONS, checksum, migrate } from './migrations';
import { probe } from './probe';

type Runner = Pick<Transaction, 'query' | 'exec'>;

function wrap(run: () => Runner, isOpen: () => boolean): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      if (!isOpen()) throw new DatabaseUnavailableError('the embedded database is closed');
      const r = await run().query<R>(sql, params ? [...params] : undefined);
      return { rows: r.rows, rowCount: Math.max(r.affectedRows ?? 0, r.rows.length) };
    },
    async exec(sql: string): Promise<void> {
      if (!isOpen()) throw new DatabaseUnavailableError('the embedded database is closed');
      await run().exec(sql);
    },
  };
}

const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'synchronous_commit=on'];

/**
 * In-memory databases (tests, a proxy without a data dir) start from a migrated empty cluster instead of running
 * initdb each time (about 0.3 s instead of 1.5-2.5 s): a tarball kept in this process and in the temp dir for the
 * next process, named by the migrations it contains. One that does not load (another PGlite version) is rebuilt.
 */
const TEMPLATE_FILE = join(tmpdir(), `hopscope-pglite-template-${MIGRATIONS.map(checksum).join('').slice(0, 16)}-${MIGRATIONS.length}.tar`);
let template: Blob | undefined;

function readTemplate(): Blob | undefined {
  if (template) return template;
  try {
    template = new Blob([readFileSync(TEMPLATE_FILE)]);
  } catch { /* none yet */ }
  return template;
}

async function keepTemplate(pg: PGlite, log: pino.Logger): Promise<void> {
  try {
    const dump = await pg.dumpDataDir('none');
    template = dump;
    const tmp = `${TEMPLATE_FILE}.${process.pid}`;
    writeFileSync(tmp, new Uint8Array(await dump.arrayBuffer()));
    renameSync(tmp, TEMPLATE_FILE);
  } catch (err) {
    log.debug({ err: (err as Error).message }, 'database: could not keep the in-memory template (next start runs initdb again)');
  }
}

async function createMemory(log: pino.Logger): Promise<{ pg: PGlite; fromTemplate: boolean }> {
  const t = readTemplate();
  if (t) {
    try {
      return { pg: await PGlite.create({ loadDataDir: t, relaxedDurability: false, startParams: START_PARAMS }), fromTemplate: true };
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'database: the in-memory template did not load; rebuilding it');
      template = undefined;
      rmSync(TEMPLATE_FILE, { force: true });
    }
  }
  return { pg: await PGlite.create({ relaxedDurability: false, startParams: START_PARAMS }), fromTemplate: false };
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
      throw new Error(`the data dir ${dataDir} cannot be used: ${(err as Error).message} (HOPSCOPE_DATA_DIR must be a directory this proxy may write)`);
    }
    if (lock.tookOver) log.warn({ previous: lock.tookOver, dataDir }, 'database: the previous proxy on this data dir did not shut down cleanly; recovering');
  }
  let pg: PGlite;
  let fromTemplate = false;
  try {
    if (pgdata) pg = await PGlite.create({ dataDir: pgdata, relaxedDurability: false, startParams: START_PARAMS });
    else ({ pg, fromTemplate } = await createMemory(log));
  } catch (err) {
    lock?.release();
    throw new Error(`could not open the embedded database in ${pgdata ?? 'memory'}: ${(err as Error).message} (a data dir made by an incompatible PGlite version, or damaged files?)`);
  }
  let open = true;
  const q = wrap(() => pg, () => open);
  let version: number;
  try {
    version = await migrate((fn) => pg.transaction((tx) => fn(wrap(() => tx, () => open))), log);
  } catch (err) {
    await pg.close().catch(() => {});
    lock?.release();
    throw err;
  }
  if (!pgdata && !fromTemplate) await keepTemplate(pg, log);
  log.info({ where: pgdata ?? 'memory', schemaVersion: version }, 'database: embedded PGlite open');
  return {
    kind: 'pglite',
    where: pgdata ?? 'memory',
    schemaVersion: version,
    query: q.query,
    exec: q.exec,
    tx: (fn) => {
      if (!open) return Promise.reject(new DatabaseUnavailableError('the embedded database is closed'));
      return pg.transaction((tx) => fn(wrap(() => tx, () => open)));
    },
    health: () => (open ? probe(() => pg.query('SELECT 1')) : Promise.resolve({ source: 'database', ok: false, error: 'closed' })),
    async close() {
      if (!open) return;
      open = false;
      try {
        await pg.close();
      } finally {
        lock?.release();
      }
    },
  };
}
