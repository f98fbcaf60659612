/**
 * Starts the proxy: config (env + overrides), sources, services (../services, built once here), express app, HTTP
 * server; stops them in reverse.
 * `startProxy({port: 0})` is what tests and the e2e host use; main.ts wraps it for the CLI.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { loadConfig, type ProxyConfig } from './config';
import { makeLogger } from './log';
import { buildApp } from './app';
import { buildServices } from './services';
import { createSources } from './sources';

export interface RunningProxy {
  url: string;
  config: ProxyConfig;
  close(): Promise<void>;
}

export async function startProxy(overrides: Partial<ProxyConfig> = {}): Promise<RunningProxy> {
  const config = loadConfig(overrides);
  if (overrides.logLevel === undefined && process.env.HOPSCOPE_LOG_LEVEL === undefined && process.env.HOPSCOPE_TEST_STAGE) config.logLevel = 'silent';
  const log = makeLogger(config.logLevel);
  const sources = createSources(config, log);
  const services = buildServices({ config, sources, log });
  const app = buildApp(config, services, log);
  await sources.init();
  const server = createServer(app);
  // Keep-alive sockets must not hold close() hostage.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => { server.off('error', reject); resolve(); });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  sources.start();
  services.start();
  log.info({ url, traces: config.tempoUrl ? 'tempo' : 'embedded', prometheus: config.prometheusUrl ?? 'none', exporters: config.exporterUrls.length }, 'proxy listening');
  let closing: Promise<void> | undefined;
  return {
    url,
    config,
    close: () => {
      closing ??= (async () => {
        await services.stop();
        await sources.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 2000).unref();
        });
        log.info('proxy stopped');
      })();
      return closing;
    },
  };
}
