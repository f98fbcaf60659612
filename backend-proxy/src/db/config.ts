/**
 * The database's part of the proxy configuration: where state lives, how long a run may go without a heartbeat,
 * how long kernel evidence is kept. `dbConfigFromEnv` throws ConfigError naming the variable; the proxy's config
 * module merges it into ProxyConfig (and ENV_HELP with DB_ENV_HELP).
 */
import { isAbsolute } from 'node:path';
import { ConfigError } from '../config-error';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from '../domain/runs';

export interface DbConfig {
  /** PostgreSQL URL (several proxies share it); wins over dataDir. */
  databaseUrl?: string;
  /** Embedded PGlite in this directory; neither set: in memory (nothing kept). */
  dataDir?: string;
  runHeartbeatTimeoutMs: number;
  kernelEvidenceRetentionMs: number;
}

export const DB_DEFAULTS: DbConfig = {
  runHeartbeatTimeoutMs: DEFAULT_HEARTBEAT_TIMEOUT_MS,
  kernelEvidenceRetentionMs: 7 * 24 * 3600_000,
};

export const DB_ENV_HELP: Record<string, string> = {
  HOPSCOPE_DATA_DIR:
    'directory of the embedded database (PGlite; one proxy per directory); unset and no HOPSCOPE_DATABASE_URL: in memory, nothing kept',
  HOPSCOPE_DATABASE_URL:
    'PostgreSQL URL, e.g. postgres://user:pass@host:5432/hopscope, shared by several proxies (wins over HOPSCOPE_DATA_DIR)',
  HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: 'a load-test worker silent this long is marked aborted, in ms (default 30000)',
  HOPSCOPE_KERNEL_EVIDENCE_RETENTION:
    'how long notable kernel events are kept in the database, e.g. 7d, 36h, 90m (default 7d)',
};

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000, w: 604_800_000 };

/** "7d", "36h", "90m", "3600s", "1w" → ms. */
export function parseDuration(name: string, raw: string, minMs: number, maxMs: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(raw);
  if (!m)
    throw new ConfigError(`${name}: "${raw}" is not a duration (a number and a unit: ms, s, m, h, d or w; e.g. 7d)`);
  const ms = Math.round(Number(m[1]) * UNITS[m[2]]);
  if (ms < minMs || ms > maxMs)
    throw new ConfigError(`${name}: ${raw} is out of range (${minMs / 60_000} min .. ${maxMs / 86_400_000} days)`);
  return ms;
}

function parseDatabaseUrl(raw: string): string {
  const v = raw.trim();
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError('HOPSCOPE_DATABASE_URL: not a URL (expected postgres://user:password@host:5432/database)');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new ConfigError(`HOPSCOPE_DATABASE_URL: must start with postgres:// or postgresql://, not ${u.protocol}//`);
  if (!u.hostname && !u.searchParams.get('host')) throw new ConfigError('HOPSCOPE_DATABASE_URL: names no host');
  return v;
}

export function dbConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DbConfig {
  const c: DbConfig = { ...DB_DEFAULTS };
  const url = env.HOPSCOPE_DATABASE_URL?.trim();
  if (url) c.databaseUrl = parseDatabaseUrl(url);
  const dir = env.HOPSCOPE_DATA_DIR?.trim();
  if (dir) {
    if (!isAbsolute(dir)) throw new ConfigError(`HOPSCOPE_DATA_DIR: "${dir}" must be an absolute path`);
    c.dataDir = dir.replace(/\/+$/, '') || '/';
  }
  const hb = env.HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS;
  if (hb !== undefined) {
    if (!/^\d+$/.test(hb.trim()))
      throw new ConfigError(`HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: "${hb}" is not a whole number of ms`);
    const n = Number(hb);
    if (n < 1000 || n > 3600_000)
      throw new ConfigError(`HOPSCOPE_RUN_HEARTBEAT_TIMEOUT_MS: ${n} is out of range 1000..3600000`);
    c.runHeartbeatTimeoutMs = n;
  }
  const ret = env.HOPSCOPE_KERNEL_EVIDENCE_RETENTION;
  if (ret !== undefined && ret.trim() !== '')
    c.kernelEvidenceRetentionMs = parseDuration('HOPSCOPE_KERNEL_EVIDENCE_RETENTION', ret, 60_000, 3650 * 86_400_000);
  return c;
}
