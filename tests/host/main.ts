/** CLI of the Grafana-compatible host (see config.ts for options, `--help`). Stops cleanly on SIGINT/SIGTERM. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';

import { ConfigError, HELP, loadConfig } from './config';
import { startHost } from './server';

const log = pino({ name: 'hopscope-host' });

let config;
try {
  config = loadConfig(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`hopscope-host: ${err.message}`);
    process.exit(2);
  }
  throw err;
}
if (config.help) {
  console.log(HELP);
  process.exit(0);
}
if (!existsSync(join(resolve(config.dist), 'module.js'))) {
  console.error(`hopscope-host: ${resolve(config.dist)}/module.js not found — build the plugin first (npm run build)`);
  process.exit(2);
}

const host = await startHost({
  port: config.port,
  host: config.bind,
  proxyUrl: config.proxyUrl,
  proxyToken: config.proxyToken,
  dist: config.dist,
  orgRole: config.orgRole,
  log: config.log,
});
log.info(
  { url: host.url, proxyUrl: config.proxyUrl, dist: resolve(config.dist) },
  `host listening on ${host.url}/a/hopscope-rca-app/`
);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) {
    return;
  }
  stopping = true;
  log.info({ signal }, 'stopping');
  void host.close().then(() => process.exit(0));
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
