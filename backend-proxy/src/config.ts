import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { formatZodError } from '../../contract/zod-error';
import { ConfigError } from './config-error';
import { anyToken, type ScopedTokens } from './http/scopes';
import { parseDuration } from './db/config';
import { RcaConfigSchema, type RcaConfigInput } from './rca/config';
import { AUTH_SOURCES, parseSourceAuth, type AuthSource, type SourceAuth } from './sources/auth';
import { DNS_PREFIX, parseDnsSpec } from './sources/dns-spec';

/**
 * The proxy's configuration: defaults from DESIGN.md, environment overrides, and a clear error for every bad value.
 * One module so that the CLI, tests and the demo read the same rules.
 */

export interface ProxyConfig {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** HOPSCOPE_PROXY_TOKEN (deprecated): one token for every scope; every /api and /v1 call needs a token when any is set. */
  token?: string;
  /** Scoped tokens (http/scopes.ts): read (Grafana), ingest (load workers, OTLP), admin (Editors' writes). */
  readToken?: string;
  /** Hosts a run's metricsUrl may name besides the registering worker's address (HOPSCOPE_RUN_METRICS_HOSTS). */
  runMetricsHosts?: string[];
  ingestToken?: string;
  adminToken?: string;
  prometheusUrl?: string;
  /** Unset → the embedded OTLP store is the trace source. */
  tempoUrl?: string;
  /** Fixed URLs, and `dns+http://name:port` entries resolved to one exporter per address (sources/discovery.ts). */
  exporterUrls: string[];
  /** How often `dns+` exporter names are looked up again. */
  exporterDnsRefreshMs: number;
  /** Sent as `Authorization: Bearer` on every exporter call (their HOPSCOPE_BPF_TOKEN); never logged. */
  exporterToken?: string;
  chainControlUrl?: string;
  /** Sent as `Authorization: Bearer` to the chain's control API (its HOPSCOPE_CHAIN_TOKEN); never logged. */
  chainControlToken?: string;
  alertmanagerUrl?: string;
  /** Where the app is served (links in exports and the PNG renderer's base); PNG renders only paths under it. */
  appUrl: string;
  chromiumPath: string;
  /** Origins allowed by CORS; empty = CORS closed. */
  corsOrigins: string[];
  /** Largest request body accepted (bytes), JSON and OTLP protobuf alike. */
  bodyLimitBytes: number;
  /** Per-call deadline to any source. */
  sourceTimeoutMs: number;
  /** Embedded store bounds. */
  storeMaxSpans: number;
  storeMaxAgeMs: number;
  storeMaxBytes: number;
  /** Continuous alert evaluation period; 0 disables the loop. */
  alertIntervalMs: number;
  /**
   * Composite alert rules to import at start when the database holds none (validated and bounded first; a refused
   * file is logged and the proxy starts without it). The database is the store; this is an import/export format.
   */
  alertRulesFile?: string;
  /** How long a proxy's leases (alert evaluator, kernel-evidence keeper) last unrenewed: a dead holder's successor takes over within it. */
  leaseTtlMs: number;
  /** Notable kernel events older than this are deleted from the database. */
  kernelEvidenceRetentionMs: number;
  /** The proxy's database (runs, alert state, kept evidence): PostgreSQL at this URL, shared by several proxies… */
  databaseUrl?: string;
  /** …else embedded PGlite in this directory (one proxy per dir); neither = in memory, lost at exit. */
  dataDir?: string;
  /** PostgreSQL: how long to keep trying to connect at start (a server that starts after the proxy). */
  databaseConnectTimeoutMs: number;
  /** A load-test worker silent for this long is marked aborted (and its run, when no other worker runs). */
  runHeartbeatTimeoutMs: number;
  /**
   * Prometheus' scrape interval: rate windows follow Grafana's `$__rate_interval` rule, max(step + scrape, 4 × scrape),
   * so a rate always spans enough samples.
   */
  scrapeIntervalMs: number;
  /** Credentials per source (HOPSCOPE_<SOURCE>_BASIC_AUTH | _BEARER_TOKEN, _ORG_ID); never logged. */
  sourceAuth: Partial<Record<AuthSource, SourceAuth>>;
  /** Live root-cause settings (SLOs, λ weights, expected edges) from HOPSCOPE_RCA_CONFIG, checked by the engine's schema. */
  rcaConfig?: RcaConfigInput;
  rcaConfigFile?: string;
  /** The global budget of window work (GET /api/rca ranges, run compare): answers, traces and bytes held at once. */
  windowMaxConcurrent: number;
  windowMaxTraces: number;
  windowMaxBytes: number;
  /** Runs, their workers' reports and saved root-cause answers older than this are deleted (HOPSCOPE_RETENTION_DAYS). */
  retentionDays: number;
  logLevel: string;
}

export { ConfigError };

export const DEFAULTS: ProxyConfig = {
  host: '127.0.0.1',
  port: 3301,
  prometheusUrl: 'http://127.0.0.1:9090',
  exporterUrls: ['http://127.0.0.1:3302'],
  exporterDnsRefreshMs: 30_000,
  chainControlUrl: 'http://127.0.0.1:3319',
  corsOrigins: [],
  appUrl: 'http://127.0.0.1:3300',
  chromiumPath: '/usr/bin/chromium',
  bodyLimitBytes: 10 * 1024 * 1024,
  sourceTimeoutMs: 5000,
  storeMaxSpans: 200_000,
  storeMaxAgeMs: 60 * 60_000,
  storeMaxBytes: 256 * 1024 * 1024,
  alertIntervalMs: 5000,
  leaseTtlMs: 15_000,
  kernelEvidenceRetentionMs: 7 * 86_400_000,
  databaseConnectTimeoutMs: 30_000,
  runHeartbeatTimeoutMs: 30_000,
  scrapeIntervalMs: 15_000,
  sourceAuth: {},
  windowMaxConcurrent: 10,
  windowMaxTraces: 10_000,
  windowMaxBytes: 128 * 1024 * 1024,
  retentionDays: 90,
  logLevel: 'info',
};

/** Environment variables the proxy reads, with what they mean (used by --help too). */
export const ENV_HELP: Record<string, string> = {
  HOPSCOPE_PROXY_HOST: 'bind address (default 127.0.0.1; non-loopback needs a token)',
  HOPSCOPE_PROXY_PORT: 'port (default 3301; 0 = any free port)',
  HOPSCOPE_PROXY_TOKEN:
    'deprecated: one bearer token for every scope (read, ingest, admin); use the three below (a warning at start)',
  HOPSCOPE_RUN_METRICS_HOSTS:
    "comma-separated hosts a run's metricsUrl may name besides the registering worker's own address (unset: that address only)",
  HOPSCOPE_READ_TOKEN: 'bearer token of the read scope: every GET and POST /api/rca (what Grafana sends for Viewers)',
  HOPSCOPE_INGEST_TOKEN:
    "bearer token of the ingest scope: POST /v1/traces and a run's registration, heartbeats and finish (load workers)",
  HOPSCOPE_ADMIN_TOKEN:
    'bearer token of the admin scope: alert rules, saved answers, deletes, and reads (what Grafana sends for Editors)',
  HOPSCOPE_PROMETHEUS_URL: 'Prometheus base URL (default http://127.0.0.1:9090; "none" disables)',
  HOPSCOPE_TEMPO_URL: 'Tempo base URL (unset = embedded OTLP store at POST /v1/traces)',
  HOPSCOPE_EXPORTER_URLS:
    'comma list of bpf-exporter URLs (default http://127.0.0.1:3302; "none" disables); dns+http://name:port = every address the name resolves to (a DaemonSet behind a headless Service)',
  HOPSCOPE_EXPORTER_DNS_REFRESH_MS: 'how often dns+ exporter names are looked up again, in ms (default 30000)',
  HOPSCOPE_EXPORTER_TOKEN:
    'bearer token sent to every bpf-exporter (their HOPSCOPE_BPF_TOKEN; required by exporters bound beyond loopback)',
  HOPSCOPE_CHAIN_CONTROL_URL:
    'chain control URL for fault annotations (default http://127.0.0.1:3319; "none" disables)',
  HOPSCOPE_CHAIN_CONTROL_TOKEN: "bearer token sent to the chain control API (the chain's HOPSCOPE_CHAIN_TOKEN)",
  HOPSCOPE_ALERTMANAGER_URL: 'Alertmanager base URL; firing/resolved alerts are pushed to its v2 API when set',
  HOPSCOPE_APP_URL:
    'base URL of the app (Grafana or the host; default http://127.0.0.1:3300) for export links and PNG rendering',
  HOPSCOPE_CHROMIUM: 'Chromium binary for PNG export (default /usr/bin/chromium)',
  HOPSCOPE_PROXY_CORS_ORIGINS: 'comma list of allowed CORS origins (default none: CORS closed)',
  HOPSCOPE_PROXY_BODY_LIMIT: 'max request body in bytes (default 10485760)',
  HOPSCOPE_SOURCE_TIMEOUT_MS: 'deadline per source call in ms (default 5000)',
  HOPSCOPE_STORE_MAX_SPANS: 'embedded store: max spans kept (default 200000)',
  HOPSCOPE_STORE_MAX_AGE_MS: 'embedded store: max span age in ms (default 3600000)',
  HOPSCOPE_STORE_MAX_BYTES: 'embedded store: approximate max bytes of span data (default 268435456)',
  HOPSCOPE_ALERT_INTERVAL_MS: 'alert evaluation period in ms (default 5000; 0 disables)',
  HOPSCOPE_ALERT_RULES_FILE:
    'JSON file of composite alert rules ({"rules": [...]}) imported at start when the database holds none; the database is the store (export: GET /api/alerts/rules/export)',
  HOPSCOPE_LEASE_TTL_MS:
    "how long the alert evaluator's and the kernel-evidence keeper's leases last unrenewed, in ms (default 15000): another proxy takes over within it",
  HOPSCOPE_KERNEL_EVIDENCE_RETENTION:
    'how long notable kernel events are kept in the database, e.g. 7d, 36h, 90m (default 7d)',
  HOPSCOPE_DATABASE_URL:
    "PostgreSQL URL (postgres://user:pass@host:5432/db) for the proxy's state, shared by several proxies; wins over HOPSCOPE_DATA_DIR",
  HOPSCOPE_DATA_DIR:
    'directory of the embedded database (PGlite; one proxy per dir); unset with no HOPSCOPE_DATABASE_URL: in memory, lost at exit',
  HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS:
    'PostgreSQL: how long to keep trying to connect at start, in ms (default 30000)',
  HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS:
    'a load-test worker without a heartbeat for this long is marked aborted, in ms (default 30000)',
  HOPSCOPE_SCRAPE_INTERVAL:
    "Prometheus scrape interval (default 15s; e.g. 5s, 1m): rate windows are max(step + scrape, 4 × scrape), Grafana's $__rate_interval rule",
  HOPSCOPE_PROMETHEUS_BASIC_AUTH:
    'user:password for Prometheus/Mimir/Thanos (basic auth; or HOPSCOPE_PROMETHEUS_BEARER_TOKEN, not both)',
  HOPSCOPE_PROMETHEUS_BEARER_TOKEN: 'bearer token for Prometheus/Mimir/Thanos',
  HOPSCOPE_PROMETHEUS_ORG_ID: 'tenant sent as X-Scope-OrgID to Prometheus (Mimir, Cortex)',
  HOPSCOPE_TEMPO_BASIC_AUTH: 'user:password for Tempo (or HOPSCOPE_TEMPO_BEARER_TOKEN)',
  HOPSCOPE_TEMPO_BEARER_TOKEN: 'bearer token for Tempo',
  HOPSCOPE_TEMPO_ORG_ID: 'tenant sent as X-Scope-OrgID to Tempo (multi-tenant Tempo)',
  HOPSCOPE_ALERTMANAGER_BASIC_AUTH: 'user:password for Alertmanager (or HOPSCOPE_ALERTMANAGER_BEARER_TOKEN)',
  HOPSCOPE_ALERTMANAGER_BEARER_TOKEN: 'bearer token for Alertmanager',
  HOPSCOPE_ALERTMANAGER_ORG_ID: "tenant sent as X-Scope-OrgID to Alertmanager (Mimir's Alertmanager)",
  HOPSCOPE_RCA_CONFIG:
    'JSON or YAML file of root-cause settings (sloMs, lambda, expectedEdges, ...: the POST /api/rca `config` fields) for every live root cause; checked at start',
  HOPSCOPE_WINDOW_MAX_CONCURRENT:
    'window answers (GET /api/rca over a range, run compare) worked on at once; past it 503 + Retry-After (default 10)',
  HOPSCOPE_WINDOW_MAX_TRACES:
    'traces the window answers in progress may reserve together (a range reads up to 1000, a compare 2000 per side); past it 503 + Retry-After (default 10000)',
  HOPSCOPE_WINDOW_MAX_BYTES:
    'approximate bytes of spans the window answers in progress hold together; a range past it reads no more and says so (default 134217728)',
  HOPSCOPE_RETENTION_DAYS:
    "days runs, their workers' reports and saved root-cause answers are kept; older ones are deleted at start and every hour (default 90)",
  HOPSCOPE_LOG_LEVEL: 'pino level: fatal|error|warn|info|debug|trace|silent (default info)',
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parseUrl(name: string, raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a URL (expected e.g. http://127.0.0.1:9090)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConfigError(`${name}: "${raw}" must use http or https, not ${u.protocol}`);
  }
  return raw.replace(/\/+$/, '');
}

function parseInt0(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name}: "${raw}" is not a whole number`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name}: ${n} is out of range ${min}..${max}`);
  return n;
}

function optionalUrl(name: string, raw: string | undefined, dflt: string | undefined): string | undefined {
  if (raw === undefined) return dflt;
  if (raw.trim() === '' || raw.trim() === 'none') return undefined;
  return parseUrl(name, raw.trim());
}

/** A PostgreSQL URL; the message never repeats a password. */
function parseDatabaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(
      'HOPSCOPE_DATABASE_URL: not a URL (expected e.g. postgres://hopscope:PASSWORD@127.0.0.1:5432/hopscope)'
    );
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new ConfigError(`HOPSCOPE_DATABASE_URL: must be a postgres:// or postgresql:// URL, not ${u.protocol}`);
  if (!u.hostname && !u.searchParams.get('host')) throw new ConfigError('HOPSCOPE_DATABASE_URL: names no host');
  return raw;
}

/** A Prometheus-style duration (`15s`, `1m`, `500ms`, or bare seconds) in ms. */
function parseScrapeInterval(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw new ConfigError(`HOPSCOPE_SCRAPE_INTERVAL: "${raw}" is not a duration (e.g. 15s, 5s, 1m)`);
  const ms = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (ms < 1000 || ms > 3_600_000) throw new ConfigError(`HOPSCOPE_SCRAPE_INTERVAL: ${raw} is out of range 1s..1h`);
  return Math.round(ms);
}

/** The root-cause settings file: JSON or YAML, validated by the engine's own schema (a typo is an error, not ignored). */
function readRcaConfig(file: string): RcaConfigInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `HOPSCOPE_RCA_CONFIG: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`
    );
  }
  let data: unknown;
  try {
    data = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `HOPSCOPE_RCA_CONFIG: ${file} is not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`
    );
  }
  if (data === null || data === undefined) data = {};
  const r = RcaConfigSchema.safeParse(data);
  if (!r.success) throw new ConfigError(`HOPSCOPE_RCA_CONFIG: ${file}: ${formatZodError(r.error)}`);
  return r.data as RcaConfigInput;
}

/** A source URL must not carry credentials: they would reach logs; HOPSCOPE_<SOURCE>_BASIC_AUTH carries them instead. */
function refuseUserinfo(name: string, url: string | undefined, prefix: string): void {
  if (!url) return;
  const u = new URL(url);
  if (u.username || u.password)
    throw new ConfigError(
      `${name}: credentials in the URL are not accepted (they would be logged); set ${prefix}_BASIC_AUTH=user:password instead`
    );
}

/** A bearer token handed to a source: empty = none; the message never repeats it. */
function optionalToken(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (/\s/.test(raw.trim())) throw new ConfigError(`${name}: must not contain whitespace (the value is not shown)`);
  return raw.trim();
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Reads the environment into a config; throws ConfigError with a message naming the variable. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const c: ProxyConfig = { ...DEFAULTS, exporterUrls: [...DEFAULTS.exporterUrls] };
  if (env.HOPSCOPE_PROXY_HOST !== undefined) {
    const h = env.HOPSCOPE_PROXY_HOST.trim();
    if (!h || /[\s/]/.test(h))
      throw new ConfigError(`HOPSCOPE_PROXY_HOST: "${env.HOPSCOPE_PROXY_HOST}" is not a host name or address`);
    c.host = h;
  }
  if (env.HOPSCOPE_PROXY_PORT !== undefined)
    c.port = parseInt0('HOPSCOPE_PROXY_PORT', env.HOPSCOPE_PROXY_PORT, 0, 65535);
  if (env.HOPSCOPE_PROXY_TOKEN !== undefined) {
    const t = env.HOPSCOPE_PROXY_TOKEN;
    if (t === '') c.token = undefined;
    else if (/\s/.test(t)) throw new ConfigError('HOPSCOPE_PROXY_TOKEN: must not contain whitespace');
    else c.token = t;
  }
  c.prometheusUrl = optionalUrl('HOPSCOPE_PROMETHEUS_URL', env.HOPSCOPE_PROMETHEUS_URL, c.prometheusUrl);
  c.tempoUrl = optionalUrl('HOPSCOPE_TEMPO_URL', env.HOPSCOPE_TEMPO_URL, undefined);
  c.chainControlUrl = optionalUrl('HOPSCOPE_CHAIN_CONTROL_URL', env.HOPSCOPE_CHAIN_CONTROL_URL, c.chainControlUrl);
  c.readToken = optionalToken('HOPSCOPE_READ_TOKEN', env.HOPSCOPE_READ_TOKEN);
  if (env.HOPSCOPE_RUN_METRICS_HOSTS !== undefined)
    c.runMetricsHosts = env.HOPSCOPE_RUN_METRICS_HOSTS.split(',')
      .map((h) => h.trim())
      .filter(Boolean);
  c.ingestToken = optionalToken('HOPSCOPE_INGEST_TOKEN', env.HOPSCOPE_INGEST_TOKEN);
  c.adminToken = optionalToken('HOPSCOPE_ADMIN_TOKEN', env.HOPSCOPE_ADMIN_TOKEN);
  c.chainControlToken = optionalToken('HOPSCOPE_CHAIN_CONTROL_TOKEN', env.HOPSCOPE_CHAIN_CONTROL_TOKEN);
  c.exporterToken = optionalToken('HOPSCOPE_EXPORTER_TOKEN', env.HOPSCOPE_EXPORTER_TOKEN);
  c.alertmanagerUrl = optionalUrl('HOPSCOPE_ALERTMANAGER_URL', env.HOPSCOPE_ALERTMANAGER_URL, undefined);
  if (env.HOPSCOPE_APP_URL !== undefined) c.appUrl = parseUrl('HOPSCOPE_APP_URL', env.HOPSCOPE_APP_URL.trim());
  if (env.HOPSCOPE_CHROMIUM !== undefined) {
    if (!env.HOPSCOPE_CHROMIUM.startsWith('/'))
      throw new ConfigError(`HOPSCOPE_CHROMIUM: "${env.HOPSCOPE_CHROMIUM}" must be an absolute path`);
    c.chromiumPath = env.HOPSCOPE_CHROMIUM;
  }
  if (env.HOPSCOPE_EXPORTER_URLS !== undefined) {
    const raw = env.HOPSCOPE_EXPORTER_URLS.trim();
    c.exporterUrls =
      raw === '' || raw === 'none'
        ? []
        : raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .map((s) => {
              if (!s.startsWith(DNS_PREFIX)) return parseUrl('HOPSCOPE_EXPORTER_URLS', s);
              try {
                return parseDnsSpec(s).spec;
              } catch (err) {
                throw new ConfigError(`HOPSCOPE_EXPORTER_URLS: ${(err as Error).message}`);
              }
            });
  }
  if (env.HOPSCOPE_EXPORTER_DNS_REFRESH_MS !== undefined)
    c.exporterDnsRefreshMs = parseInt0(
      'HOPSCOPE_EXPORTER_DNS_REFRESH_MS',
      env.HOPSCOPE_EXPORTER_DNS_REFRESH_MS,
      1000,
      3600_000
    );
  if (env.HOPSCOPE_PROXY_CORS_ORIGINS !== undefined) {
    c.corsOrigins = env.HOPSCOPE_PROXY_CORS_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => (s === '*' ? s : parseUrl('HOPSCOPE_PROXY_CORS_ORIGINS', s)));
  }
  if (env.HOPSCOPE_PROXY_BODY_LIMIT !== undefined)
    c.bodyLimitBytes = parseInt0('HOPSCOPE_PROXY_BODY_LIMIT', env.HOPSCOPE_PROXY_BODY_LIMIT, 1024, 1024 ** 3);
  if (env.HOPSCOPE_SOURCE_TIMEOUT_MS !== undefined)
    c.sourceTimeoutMs = parseInt0('HOPSCOPE_SOURCE_TIMEOUT_MS', env.HOPSCOPE_SOURCE_TIMEOUT_MS, 50, 600_000);
  if (env.HOPSCOPE_STORE_MAX_SPANS !== undefined)
    c.storeMaxSpans = parseInt0('HOPSCOPE_STORE_MAX_SPANS', env.HOPSCOPE_STORE_MAX_SPANS, 100, 100_000_000);
  if (env.HOPSCOPE_STORE_MAX_AGE_MS !== undefined)
    c.storeMaxAgeMs = parseInt0('HOPSCOPE_STORE_MAX_AGE_MS', env.HOPSCOPE_STORE_MAX_AGE_MS, 1000, 30 * 24 * 3600_000);
  if (env.HOPSCOPE_STORE_MAX_BYTES !== undefined)
    c.storeMaxBytes = parseInt0('HOPSCOPE_STORE_MAX_BYTES', env.HOPSCOPE_STORE_MAX_BYTES, 65536, 64 * 1024 ** 3);
  if (env.HOPSCOPE_ALERT_INTERVAL_MS !== undefined)
    c.alertIntervalMs = parseInt0('HOPSCOPE_ALERT_INTERVAL_MS', env.HOPSCOPE_ALERT_INTERVAL_MS, 0, 3600_000);
  if (env.HOPSCOPE_ALERT_RULES_FILE !== undefined && env.HOPSCOPE_ALERT_RULES_FILE.trim() !== '') {
    const f = env.HOPSCOPE_ALERT_RULES_FILE.trim();
    if (!f.startsWith('/')) throw new ConfigError(`HOPSCOPE_ALERT_RULES_FILE: "${f}" must be an absolute path`);
    c.alertRulesFile = f;
  }
  if (env.HOPSCOPE_LEASE_TTL_MS !== undefined)
    c.leaseTtlMs = parseInt0('HOPSCOPE_LEASE_TTL_MS', env.HOPSCOPE_LEASE_TTL_MS, 1000, 3600_000);
  if (env.HOPSCOPE_KERNEL_EVIDENCE_RETENTION !== undefined && env.HOPSCOPE_KERNEL_EVIDENCE_RETENTION.trim() !== '') {
    c.kernelEvidenceRetentionMs = parseDuration(
      'HOPSCOPE_KERNEL_EVIDENCE_RETENTION',
      env.HOPSCOPE_KERNEL_EVIDENCE_RETENTION,
      60_000,
      3650 * 86_400_000
    );
  }
  if (env.HOPSCOPE_DATABASE_URL !== undefined && env.HOPSCOPE_DATABASE_URL.trim() !== '')
    c.databaseUrl = parseDatabaseUrl(env.HOPSCOPE_DATABASE_URL.trim());
  if (env.HOPSCOPE_DATA_DIR !== undefined && env.HOPSCOPE_DATA_DIR.trim() !== '')
    c.dataDir = resolve(env.HOPSCOPE_DATA_DIR.trim());
  if (env.HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS !== undefined)
    c.databaseConnectTimeoutMs = parseInt0(
      'HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS',
      env.HOPSCOPE_DATABASE_CONNECT_TIMEOUT_MS,
      0,
      3600_000
    );
  if (env.HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS !== undefined)
    c.runHeartbeatTimeoutMs = parseInt0(
      'HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS',
      env.HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS,
      1000,
      86_400_000
    );
  if (env.HOPSCOPE_WINDOW_MAX_CONCURRENT !== undefined)
    c.windowMaxConcurrent = parseInt0('HOPSCOPE_WINDOW_MAX_CONCURRENT', env.HOPSCOPE_WINDOW_MAX_CONCURRENT, 1, 1000);
  if (env.HOPSCOPE_WINDOW_MAX_TRACES !== undefined)
    c.windowMaxTraces = parseInt0('HOPSCOPE_WINDOW_MAX_TRACES', env.HOPSCOPE_WINDOW_MAX_TRACES, 1, 10_000_000);
  if (env.HOPSCOPE_WINDOW_MAX_BYTES !== undefined)
    c.windowMaxBytes = parseInt0('HOPSCOPE_WINDOW_MAX_BYTES', env.HOPSCOPE_WINDOW_MAX_BYTES, 65536, 64 * 1024 ** 3);
  if (env.HOPSCOPE_RETENTION_DAYS !== undefined)
    c.retentionDays = parseInt0('HOPSCOPE_RETENTION_DAYS', env.HOPSCOPE_RETENTION_DAYS, 1, 36_500);
  if (env.HOPSCOPE_SCRAPE_INTERVAL !== undefined && env.HOPSCOPE_SCRAPE_INTERVAL.trim() !== '')
    c.scrapeIntervalMs = parseScrapeInterval(env.HOPSCOPE_SCRAPE_INTERVAL);
  c.sourceAuth = {};
  for (const [source, name] of Object.entries(AUTH_SOURCES) as Array<[AuthSource, string]>) {
    const prefix = `HOPSCOPE_${name}`;
    try {
      const a = parseSourceAuth(prefix, env);
      if (a) c.sourceAuth[source] = a;
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  refuseUserinfo('HOPSCOPE_PROMETHEUS_URL', c.prometheusUrl, 'HOPSCOPE_PROMETHEUS');
  refuseUserinfo('HOPSCOPE_TEMPO_URL', c.tempoUrl, 'HOPSCOPE_TEMPO');
  refuseUserinfo('HOPSCOPE_ALERTMANAGER_URL', c.alertmanagerUrl, 'HOPSCOPE_ALERTMANAGER');
  if (env.HOPSCOPE_RCA_CONFIG !== undefined && env.HOPSCOPE_RCA_CONFIG.trim() !== '') {
    c.rcaConfigFile = resolve(env.HOPSCOPE_RCA_CONFIG.trim());
    c.rcaConfig = readRcaConfig(c.rcaConfigFile);
  }
  if (env.HOPSCOPE_LOG_LEVEL !== undefined) {
    if (!LOG_LEVELS.includes(env.HOPSCOPE_LOG_LEVEL))
      throw new ConfigError(`HOPSCOPE_LOG_LEVEL: "${env.HOPSCOPE_LOG_LEVEL}" is not one of ${LOG_LEVELS.join('|')}`);
    c.logLevel = env.HOPSCOPE_LOG_LEVEL;
  }
  return c;
}

/** The configured tokens by scope (http/scopes.ts). */
export const tokensOf = (c: Pick<ProxyConfig, 'token' | 'readToken' | 'ingestToken' | 'adminToken'>): ScopedTokens => ({
  all: c.token,
  read: c.readToken,
  ingest: c.ingestToken,
  admin: c.adminToken,
});

/** Rules that involve more than one value; run on the final config (env + overrides). */
function validateConfig(c: ProxyConfig): ProxyConfig {
  if (!Number.isInteger(c.port) || c.port < 0 || c.port > 65535)
    throw new ConfigError(`port: ${c.port} is out of range 0..65535`);
  if (!isLoopback(c.host) && !anyToken(tokensOf(c))) {
    throw new ConfigError(
      `refusing to bind ${c.host} without a token: a non-loopback address exposes traces and metrics to the network. ` +
        'Set HOPSCOPE_READ_TOKEN, HOPSCOPE_INGEST_TOKEN and HOPSCOPE_ADMIN_TOKEN, or bind 127.0.0.1.'
    );
  }
  return c;
}

export function loadConfig(overrides: Partial<ProxyConfig> = {}, env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  return validateConfig({ ...configFromEnv(env), ...overrides });
}
