/**
 * The database's interface, which both engines (pglite.ts, postgres.ts) implement and every repository uses; its own
 * module so the engines and the migrations need not import database.ts, which imports them.
 */
import type pino from 'pino';
import type { SourceStatus } from '../../../contract';

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
