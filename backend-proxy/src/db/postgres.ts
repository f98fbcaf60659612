/**
 * PostgreSQL through a node-postgres pool: what several proxies share. Errors that mean "cannot reach or cannot
 * serve now" become DatabaseUnavailableError (the caller answers 503 and the client retries); a broken connection
 * is dropped from the pool, and idle-connection errors are logged, never thrown (they would crash the process).
 * Commits are durable as the server makes them (fsync on: PostgreSQL's default).
 */
import pg from 'pg';
import type { Database, OpenDatabaseOptions, Queryable, QueryResult } from './types';
import { DatabaseUnavailableError, classify, isUnavailable } from './errors';
import { migrate } from './migrations';
import { probe } from './probe';

/** The URL without its password (in the user part or as a `password`/`sslpassword` parameter), for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const k of [...u.searchParams.keys()]) if (/pass(word)?$|secret|token/i.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

const INT8_OID = 20;
// Epoch ms and counts are bigint columns; every one of them fits a double exactly (< 2^53).
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function clientQueryable(c: pg.PoolClient | pg.Pool, what: string): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      try {
        const r = await c.query(sql, params ? [...params] : undefined);
        return { rows: r.rows as R[], rowCount: r.rowCount ?? r.rows.length };
      } catch (err) {
        throw classify(err, what);
      }
    },
    async exec(sql: string): Promise<void> {
      try {
        await c.query(sql);
      } catch (err) {
        throw classify(err, what);
      }
    },
  };
}

/** Login refused, no such database…: waiting will not help, say what to fix. */
function fatalConnectError(err: unknown, where: string): Error | undefined {
  const code = (err as { code?: string }).code ?? '';
  const msg = (err as Error).message;
  if (code === '28P01' || code === '28000')
    return new Error(`HOPSCOPE_DATABASE_URL: PostgreSQL at ${where} refused the login (${msg})`);
  if (code === '3D000') return new Error(`HOPSCOPE_DATABASE_URL: ${msg} at ${where} (create it first, e.g. createdb)`);
  return undefined;
}

export async function openPostgres(url: string, o: OpenDatabaseOptions): Promise<Database> {
  const { log } = o;
  const where = redactUrl(url);
  const what = `PostgreSQL at ${where}`;
  const statementTimeoutMs = o.statementTimeoutMs ?? 15_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: o.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + 5_000,
    application_name: 'hopscope-proxy',
    keepAlive: true,
    types,
  });
  pool.on('error', (err) =>
    log.warn({ err: err.message }, 'database: an idle PostgreSQL connection failed; the pool replaces it')
  );
  const q = clientQueryable(pool, what);

  const tx = async <T>(fn: (q: Queryable) => Promise<T>): Promise<T> => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw classify(err, what);
    }
    const cq = clientQueryable(client, what);
    let broken: unknown;
    try {
      await cq.exec('BEGIN');
      const out = await fn(cq);
      await cq.exec('COMMIT');
      return out;
    } catch (err) {
      if (isUnavailable(err)) broken = err;
      else
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e;
        });
      throw err;
    } finally {
      // A connection that failed mid-transaction is destroyed, not handed to the next caller.
      client.release(broken instanceof Error ? broken : broken ? new Error(String(broken)) : undefined);
    }
  };

  const deadline = Date.now() + (o.connectTimeoutMs ?? 30_000);
  let version: number | undefined;
  for (let attempt = 1; version === undefined; attempt++) {
    try {
      version = await migrate(tx, log);
    } catch (err) {
      const fatal = fatalConnectError(err, where);
      if (fatal || !isUnavailable(err)) {
        await pool.end().catch(() => {});
        throw fatal ?? err;
      }
      if (Date.now() >= deadline) {
        await pool.end().catch(() => {});
        throw new DatabaseUnavailableError(
          `${what} could not be reached at start (${(err as Error).message}); is it running, and is HOPSCOPE_DATABASE_URL right?`
        );
      }
      log.warn({ attempt, err: (err as Error).message, where }, 'database: waiting for PostgreSQL');
      await new Promise((r) => setTimeout(r, Math.min(2000, 200 * attempt)));
    }
  }
  log.info({ where, schemaVersion: version }, 'database: PostgreSQL open');
  let closed = false;
  return {
    kind: 'postgres',
    where,
    schemaVersion: version,
    query: (sql, params) =>
      closed ? Promise.reject(new DatabaseUnavailableError('the database is closed')) : q.query(sql, params),
    exec: (sql) => (closed ? Promise.reject(new DatabaseUnavailableError('the database is closed')) : q.exec(sql)),
    tx: (fn) => (closed ? Promise.reject(new DatabaseUnavailableError('the database is closed')) : tx(fn)),
    health: () => probe(() => pool.query('SELECT 1')),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
