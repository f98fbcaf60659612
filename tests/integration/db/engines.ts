/**
 * Runs a suite against both engines: embedded PGlite in a temp dir and a real PostgreSQL (tests/support/postgres.ts),
 * skipped with the reason when PostgreSQL is not installed. `fresh()` gives an empty, migrated database each time
 * (PGlite: a copy of one migrated template dir, since initdb costs seconds; PostgreSQL: CREATE DATABASE).
 */
import { after, before, describe } from 'node:test';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openDatabase, type Database } from '../../../backend-proxy/src/db/database';
import { postgresSkipReason, startPostgres, type PostgresServer } from '../../support/postgres';

export const quietLog = pino({ level: process.env.HOPSCOPE_LOG_LEVEL ?? 'silent' });

export interface Fresh {
  db: Database;
  /** What openDatabase needs to open the same database again. */
  where: { dataDir?: string; databaseUrl?: string };
}

export interface Engine {
  kind: 'pglite' | 'postgres';
  /** An empty, migrated database (closed after the suite). */
  fresh(): Promise<Fresh>;
  /** Opens the same database again (another proxy, or after a restart). */
  open(where: Fresh['where']): Promise<Database>;
  /** The PostgreSQL server (postgres engine only): stop/start/kill9 it. */
  server?: PostgresServer;
  /** A directory removed after the suite. */
  tempDir(prefix: string): string;
}

function engine(kind: Engine['kind']): Engine & { setup(): Promise<void>; teardown(): Promise<void> } {
  const opened: Database[] = [];
  const dirs: string[] = [];
  let template: string | undefined;
  const tempDir = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const open = async (where: Fresh['where']): Promise<Database> => {
    const db = await openDatabase({ ...where, log: quietLog, connectTimeoutMs: 5000 });
    opened.push(db);
    return db;
  };
  const e = {
    kind,
    tempDir,
    open,
    server: undefined as PostgresServer | undefined,
    async setup() {
      if (kind === 'postgres') e.server = await startPostgres();
      else {
        template = join(tempDir('hopscope-db-template-'), 'data');
        const db = await openDatabase({ dataDir: template, log: quietLog });
        await db.close();
      }
    },
    async teardown() {
      for (const db of opened) await db.close().catch(() => {});
      await e.server?.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
    async fresh(): Promise<Fresh> {
      const where =
        kind === 'postgres'
          ? { databaseUrl: await e.server!.createDatabase() }
          : { dataDir: join(tempDir('hopscope-db-'), 'data') };
      if (where.dataDir) cpSync(template!, where.dataDir, { recursive: true });
      return { db: await open(where), where };
    },
  };
  return e;
}

/** `suite(engine)` once per engine, inside describe('pglite') and describe('postgres'). */
export function forEachEngine(suite: (e: Engine) => void): void {
  for (const kind of ['pglite', 'postgres'] as const) {
    const skip = kind === 'postgres' ? postgresSkipReason() : undefined;
    describe(kind, { skip }, () => {
      const e = engine(kind);
      before(() => e.setup());
      after(() => e.teardown());
      suite(e);
    });
  }
}
