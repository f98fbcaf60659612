#!/usr/bin/env -S npx tsx
/** CLI: `tsx backend-proxy/src/main.ts [--help]`. Configuration comes from the environment (see --help). */
import { ConfigError, DEFAULTS, ENV_HELP } from './config';
import { makeLogger } from './log';
import { uncaughtErrors } from './metrics';
import { OTEL_HELP, selfTracingFromEnv, startSelfTracing } from './telemetry';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const lines = Object.entries(ENV_HELP).map(([k, v]) => `  ${k.padEnd(34)} ${v}`);
  const otel = Object.entries(OTEL_HELP).map(([k, v]) => `  ${k.padEnd(34)} ${v}`);
  console.log(`hopscope backend proxy: merges Prometheus, Tempo (or its embedded OTLP store) and the bpf-exporters under /api.

Usage: tsx backend-proxy/src/main.ts [--help]
Listens on ${DEFAULTS.host}:${DEFAULTS.port} by default; OTLP/HTTP traces at POST /v1/traces; metrics at GET /metrics.

Environment:
${lines.join('\n')}

Source credentials: one scheme for Prometheus (Mimir/Thanos), Tempo and Alertmanager. HOPSCOPE_<SOURCE>_BASIC_AUTH=user:password
or HOPSCOPE_<SOURCE>_BEARER_TOKEN=<token> (not both), and HOPSCOPE_<SOURCE>_ORG_ID=<tenant> sent as X-Scope-OrgID, with
<SOURCE> = PROMETHEUS, TEMPO or ALERTMANAGER. Credentials inside a URL are refused; secrets are never logged.

The proxy's own traces (OpenTelemetry; a request's traceparent parents the proxy's spans, and source calls carry it on):
${otel.join('\n')}`);
  process.exit(0);
}
const unknown = process.argv.slice(2).filter((a) => a !== '--help' && a !== '-h');
if (unknown.length) {
  console.error(
    `hopscope-proxy: unknown argument(s) ${unknown.join(' ')}; configuration is by environment, see --help`
  );
  process.exit(2);
}

/**
 * A rejected promise nobody awaited, or an exception thrown in a timer callback, is a bug in one task, not a reason
 * to drop every request in flight: logged with its stack, counted (hopscope_proxy_uncaught_errors_total), survived.
 */
function guardProcess(): void {
  let log: ReturnType<typeof makeLogger>;
  try {
    log = makeLogger(process.env.HOPSCOPE_LOG_LEVEL?.trim() || 'info');
  } catch {
    log = makeLogger('info');
  }
  process.on('unhandledRejection', (reason) => {
    uncaughtErrors.inc({ kind: 'rejection' });
    log.error(
      { err: reason instanceof Error ? reason : new Error(String(reason)) },
      'unhandled promise rejection (survived)'
    );
  });
  process.on('uncaughtException', (err, origin) => {
    uncaughtErrors.inc({ kind: 'exception' });
    log.error({ err, origin }, 'uncaught exception (survived)');
  });
}

guardProcess();
try {
  const stopTracing = startSelfTracing(selfTracingFromEnv());
  // The proxy's modules load once the instrumentations are registered (express and node:http, which telemetry.ts
  // loads itself, are patched in place; undici is traced through its diagnostics channels).
  const { startProxy } = await import('./server');
  const proxy = await startProxy();
  console.log(`hopscope-proxy listening on ${proxy.url}`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`hopscope-proxy: ${sig}, shutting down`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    proxy
      .close()
      .then(stopTracing)
      .then(
        () => process.exit(0),
        () => process.exit(1)
      );
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
  // Not rethrown: the guard above would log and survive it, and a proxy that could not start must exit.
  console.error('hopscope-proxy: could not start:', err);
  process.exit(1);
}
