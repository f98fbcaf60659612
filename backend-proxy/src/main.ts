#!/usr/bin/env -S npx tsx
/** CLI: `tsx backend-proxy/src/main.ts [--help]`. Configuration comes from the environment (see --help). */
import { ConfigError, DEFAULTS, ENV_HELP } from './config';
import { startProxy } from './server';
import { startSelfTracing } from './telemetry';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const lines = Object.entries(ENV_HELP).map(([k, v]) => `  ${k.padEnd(30)} ${v}`);
  console.log(`hopscope backend proxy: merges Prometheus, Tempo (or its embedded OTLP store) and the bpf-exporters under /api.

Usage: tsx backend-proxy/src/main.ts [--help]
Listens on ${DEFAULTS.host}:${DEFAULTS.port} by default; OTLP/HTTP traces at POST /v1/traces; metrics at GET /metrics.

Environment:
${lines.join('\n')}
  ${'HOPSCOPE_PROXY_OTLP_URL'.padEnd(30)} export the proxy's own spans over OTLP/HTTP (e.g. to Tempo; unset = off)`);
  process.exit(0);
}
const unknown = process.argv.slice(2).filter((a) => a !== '--help' && a !== '-h');
if (unknown.length) {
  console.error(`hopscope-proxy: unknown argument(s) ${unknown.join(' ')}; configuration is by environment, see --help`);
  process.exit(2);
}

try {
  const otlp = process.env.HOPSCOPE_PROXY_OTLP_URL?.trim() || undefined;
  if (otlp && !/^https?:\/\//.test(otlp)) throw new ConfigError(`HOPSCOPE_PROXY_OTLP_URL: "${otlp}" must be an http(s) URL, e.g. http://127.0.0.1:3301/v1/traces`);
  const stopTracing = startSelfTracing(otlp);
  const proxy = await startProxy();
  console.log(`hopscope-proxy listening on ${proxy.url}`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`hopscope-proxy: ${sig}, shutting down`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    proxy.close().then(stopTracing).then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`hopscope-proxy: configuration error: ${err.message}`);
    process.exit(2);
  }
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'EADDRINUSE') {
    console.error(`hopscope-proxy: the port is already in use (${e.message}); set HOPSCOPE_PROXY_PORT`);
    process.exit(1);
  }
  throw err;
}
