/**
 * The proxy's database, one small interface over two engines: embedded PGlite in a data dir (one proxy per dir; the
 * default for `npm start`) or a PostgreSQL server shared by several proxies. One SQL dialect (PGlite is PostgreSQL),
 * one schema, versioned migrations applied at open. Repositories take a `Queryable` so a service can compose them in
 * one transaction.
 */
import type pino from 'pino';
import type { SourceStatus } from '../../../contract';
import { openPglite } from './pglite';
import { openPostgres } from './postgres';

export interface QueryResult<R> {
  rows: R[];
  /** Rows returned, or changed by INSERT/UPDATE/DELETE. */
  rowCount: number;
}

export interface Queryable {
  /** One statement, `$1…` parameters. Pass JSON as `JSON.stringify(x)` with `$n::jsonb`. */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** Where it lives, safe to log: the data dir, `memory`, or the URL without its password. */
  readonly where: string;
  /** The schema version after migrations. */
  readonly schemaVersion: number;
  /** Runs `fn` in one transaction: committed when it resolves (then durable), rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** `SELECT 1` with a deadline, as the contract's per-source status (`source: "database"`). */
  health(): Promise<SourceStatus>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL, e.g. postgres://hopscope@db:5432/hopscope. Wins over dataDir when both are set. */
  databaseUrl?: string;
  /** Embedded PGlite in this directory (created if absent; the cluster lives in `<dataDir>/pgdata`). */
  dataDir?: string;
  log: pino.Logger;
  /** PostgreSQL only: how long to keep trying to connect at start (a server that starts after the proxy). */
  connectTimeoutMs?: number;
  /** PostgreSQL only: pool size per proxy. */
  poolSize?: number;
  /** PostgreSQL only: per-statement deadline, so a hung server answers `unavailable` instead of hanging callers. */
  statementTimeoutMs?: number;
}

/**
 * Opens the configured database and applies pending migrations. Neither a URL nor a dir: an in-memory PGlite
 * (tests, throwaway runs), with a warning that nothing is kept.
 */
export async function openDatabase(o: OpenDatabaseOptions): Promise<Database> {
  if (o.databaseUrl) {
    if (o.dataDir) o.log.info({ dataDir: o.dataDir }, 'database: HOPSCOPE_DATABASE_URL is set, so the data dir is not used');
    return openPostgres(o.databaseUrl, o);
  }
  if (!o.dataDir) o.log.warn('database: in memory (neither HOPSCOPE_DATA_DIR nor HOPSCOPE_DATABASE_URL is set): runs, alert state and saved answers are lost at exit');
  return openPglite(o.dataDir, o.log);
}
