/**
 * Starts the proxy: config (env + overrides), the database (opened, migrations applied: a database that cannot be
 * opened stops the start with DatabaseStartError), sources, services (../services, built once here), express app,
 * HTTP server; stops them in reverse (the database last).
 * `startProxy({port: 0})` is what tests and the e2e host use; main.ts wraps it for the CLI.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { ConfigError, loadConfig, type ProxyConfig } from './config';
import { makeLogger } from './log';
import { buildApp } from './app';
import { openDatabase, type Database } from './db/database';
import { redactUrl } from './db/postgres';
import { buildServices } from './services';
import { createSources } from './sources';

/**
 * The configured database could not be opened at start (unreachable, locked by another proxy, schema too new…): a
 * startup error like a bad setting, named by its variable, so the CLI prints it and exits without a stack.
 */
export class DatabaseStartError extends ConfigError {
  override name = 'DatabaseStartError';
}

/** How long a client may take to send its request headers, and its whole request (a 10 MiB body on a slow link). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 60_000;

export interface RunningProxy {
  url: string;
  config: ProxyConfig;
  /** The proxy's database (tests look into it). */
  db: Database;
  close(): Promise<void>;
}

async function openConfiguredDatabase(config: ProxyConfig, log: ReturnType<typeof makeLogger>): Promise<Database> {
  const where = config.databaseUrl
    ? `PostgreSQL at ${redactUrl(config.databaseUrl)} (HOPSCOPE_DATABASE_URL)`
    : config.dataDir
      ? `the embedded database in ${config.dataDir} (HOPSCOPE_DATA_DIR)`
      : 'the in-memory database';
  try {
    return await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      log,
    });
  } catch (err) {
    throw new DatabaseStartError(`cannot open ${where}: ${(err as Error).message}`);
  }
}

export async function startProxy(overrides: Partial<ProxyConfig> = {}): Promise<RunningProxy> {
  const config = loadConfig(overrides);
  if (
    overrides.logLevel === undefined &&
    process.env.HOPSCOPE_LOG_LEVEL === undefined &&
    process.env.HOPSCOPE_TEST_STAGE
  )
    config.logLevel = 'silent';
  const log = makeLogger(config.logLevel);
  const db = await openConfiguredDatabase(config, log);
  const sources = createSources(config, log);
  const services = buildServices({ config, sources, log, db });
  const app = buildApp(config, services, log);
  // Slow clients cannot hold connections: headers must arrive within HEADERS_TIMEOUT_MS and the whole request within
  // REQUEST_TIMEOUT_MS (node answers 408 and closes), checked every second (node's default check is every 30 s).
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    app
  );
  // Keep-alive sockets must not hold close() hostage.
  server.keepAliveTimeout = 5000;
  try {
    await sources.init();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await sources.stop();
    await db.close();
    throw err;
  }
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  sources.start();
  services.start();
  log.info(
    {
      url,
      traces: config.tempoUrl ? 'tempo' : 'embedded',
      prometheus: config.prometheusUrl ?? 'none',
      exporters: config.exporterUrls.length,
      database: `${db.kind} ${db.where}`,
    },
    'proxy listening'
  );
  if (config.token)
    log.warn(
      'HOPSCOPE_PROXY_TOKEN is deprecated: it grants every scope (read, ingest, admin). Give Grafana HOPSCOPE_READ_TOKEN and HOPSCOPE_ADMIN_TOKEN and the load workers HOPSCOPE_INGEST_TOKEN instead'
    );
  let closing: Promise<void> | undefined;
  return {
    url,
    config,
    db,
    close: () => {
      closing ??= (async () => {
        await services.stop();
        await sources.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 2000).unref();
        });
        await db.close().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'database: close failed'));
        log.info('proxy stopped');
      })();
      return closing;
    },
  };
}
