/**
 * Versioned migrations: an ordered list, recorded in `schema_migrations` with a checksum, all pending ones applied
 * in one transaction at open. A transaction-scoped advisory lock makes two proxies starting at once against one
 * PostgreSQL take turns (the second finds everything applied); on PGlite it is a no-op with one connection.
 */
import { createHash } from 'node:crypto';
import type pino from 'pino';
import type { Queryable } from '../types';
import { DatabaseSchemaError } from '../errors';
import { initial } from './0001-initial';
import { evidenceStreams } from './0002-evidence-streams';
import type { Migration } from './types';

export type { Migration } from './types';

export const MIGRATIONS: readonly Migration[] = [initial, evidenceStreams];

/** Arbitrary, fixed: the advisory lock key of Hopscope's migrations ("hopsmigr"). */
const MIGRATION_LOCK_KEY = 0x686f70736d6967n;

export const checksum = (m: Migration): string => createHash('sha256').update(m.sql.trim()).digest('hex').slice(0, 16);

type Tx = <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>;

/** Applies what is pending; returns the schema version. Throws DatabaseSchemaError when it must not go on. */
export async function migrate(
  tx: Tx,
  log: pino.Logger,
  migrations: readonly Migration[] = MIGRATIONS
): Promise<number> {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migrations must be numbered 1, 2, 3… in order; #${i} is version ${m.version}`);
  });
  const known = migrations.length;
  return tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY.toString()]);
    await q.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      checksum   text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = (
      await q.query<{ version: number; name: string; checksum: string }>(
        'SELECT version, name, checksum FROM schema_migrations ORDER BY version'
      )
    ).rows;
    const newest = applied.at(-1)?.version ?? 0;
    if (newest > known) {
      throw new DatabaseSchemaError(
        `the database schema is at version ${newest}, newer than this proxy knows (${known}): a newer proxy migrated it; run that version (or newer) here too`
      );
    }
    for (const a of applied) {
      const m = migrations[a.version - 1];
      if (checksum(m) !== a.checksum) {
        throw new DatabaseSchemaError(
          `migration ${a.version} ("${a.name}") differs from the one applied to this database (checksum ${a.checksum}, now ${checksum(m)}): applied migrations must not change; add a new one`
        );
      }
    }
    const done = new Set(applied.map((a) => a.version));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        checksum(m),
      ]);
      log.info({ version: m.version, name: m.name }, 'database: migration applied');
    }
    return known;
  });
}
