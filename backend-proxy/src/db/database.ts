/**
 * The proxy's database, one small interface over two engines: embedded PGlite in a data dir (one proxy per dir; the
 * default for `npm start`) or a PostgreSQL server shared by several proxies. One SQL dialect (PGlite is PostgreSQL),
 * one schema, versioned migrations applied at open. Repositories take a `Queryable` so a service can compose them in
 * one transaction.
 */
import { openPglite } from './pglite';
import { openPostgres } from './postgres';
import type { Database, OpenDatabaseOptions } from './types';

export type { Database, DatabaseKind, OpenDatabaseOptions, Queryable, QueryResult } from './types';

/**
 * Opens the configured database and applies pending migrations. Neither a URL nor a dir: an in-memory PGlite
 * (tests, throwaway runs), with a warning that nothing is kept.
 */
export async function openDatabase(o: OpenDatabaseOptions): Promise<Database> {
  if (o.databaseUrl) {
    if (o.dataDir)
      o.log.info({ dataDir: o.dataDir }, 'database: HOPSCOPE_DATABASE_URL is set, so the data dir is not used');
    return openPostgres(o.databaseUrl, o);
  }
  if (!o.dataDir)
    o.log.warn(
      'database: in memory (neither HOPSCOPE_DATA_DIR nor HOPSCOPE_DATABASE_URL is set): runs, alert state and saved answers are lost at exit'
    );
  return openPglite(o.dataDir, o.log);
}
