/** Exporter configuration: defaults, env overrides, and a clear error for every bad value. */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { ALL_PROBES, DEFAULT_PROBES } from './probes';

export interface ExporterConfig {
  host: string;
  port: number;
  node: string;
  probes: string[];
  bpftrace: string;
  /** Files named explicitly for the uprobes, per kind (attached whatever the discovery finds). */
  uprobeFiles: { node: string[]; libssl: string[]; libcuda: string[] };
  /** Period of the discovery of the workloads' files (0 = explicit files only). */
  scanMs: number;
  /** Bearer token of /register and the event API; unset = open, loopback only. */
  token?: string;
  /** Where pod identities come from. */
  kubernetes: { mode: 'in-cluster' | 'kubeconfig' | 'off'; kubeconfig?: string };
  /** Pod label keys kept on events and metrics. */
  podLabels: string[];
  sseMaxClients: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  traceparentSampleEvery: number;
  ringSize: number;
  maxRangeMs: number;
  maxEventsPerQuery: number;
  replayFile?: string;
  replayTiming: 'original' | 'fast';
  recordFile?: string;
  logLevel: string;
  perfPages: number;
  batchPauseMs: number;
  eventBudget: number;
  flushMs: number;
}

export const ENV_HELP = `Environment (all optional):
  HOPSCOPE_BPF_HOST            bind address (127.0.0.1); a non-loopback address needs HOPSCOPE_BPF_TOKEN
  HOPSCOPE_BPF_TOKEN           bearer token required by /register, /events and /events/stream (unset: open, loopback only)
  HOPSCOPE_BPF_PORT            port (3302; 0 = any free port)
  HOPSCOPE_BPF_NODE            node name put on every event and metric (this host's name)
  HOPSCOPE_BPF_PROBES          comma list of probes (${DEFAULT_PROBES.join(',')}); available: ${ALL_PROBES.map((p) => p.name).join(', ')}
  HOPSCOPE_BPFTRACE            bpftrace binary (bpftrace from PATH)
  HOPSCOPE_BPF_NODE_BINARY     comma list of node binaries to probe besides the ones the workloads run (none)
  HOPSCOPE_BPF_LIBSSL          comma list of OpenSSL 3 libraries to probe besides the workloads' (none)
  HOPSCOPE_BPF_LIBCUDA         comma list of CUDA driver libraries to probe besides the workloads' (none)
  HOPSCOPE_BPF_SCAN_MS         how often the workloads' processes are scanned for those files (15000; 0 = named files only)
  HOPSCOPE_BPF_KUBECONFIG      kubeconfig for pod identities from the Kubernetes API (in a pod: its ServiceAccount);
                               its current context's token, tokenFile or client certificate (no exec/auth-provider
                               plugins); an http:// server only with insecure-skip-tls-verify (client-node's rule)
  HOPSCOPE_BPF_POD_LABELS      comma list of pod labels put on events and metrics (app.kubernetes.io/name; empty = none)
  HOPSCOPE_BPF_SSE_MAX_CLIENTS most /events/stream subscribers at once (16); the next one gets 503
  HOPSCOPE_BPF_HEADERS_TIMEOUT_MS  a connection that has not sent its request headers by then is closed (10000)
  HOPSCOPE_BPF_REQUEST_TIMEOUT_MS  a request not received whole by then is closed (30000)
  HOPSCOPE_BPF_TRACEPARENT_SAMPLE  read the traceparent of 1 in N requests (10)
  HOPSCOPE_BPF_RING_SIZE       events kept for /events (20000)
  HOPSCOPE_BPF_MAX_RANGE_MS    widest /events range (86400000)
  HOPSCOPE_BPF_REPLAY          JSONL file to replay instead of attaching probes (mode "replay")
  HOPSCOPE_BPF_REPLAY_TIMING   original | fast (original)
  HOPSCOPE_BPF_RECORD          JSONL file to append live events to
  HOPSCOPE_BPF_PERF_PAGES      bpftrace perf ring pages per CPU (512; bpftrace's default 64 loses events on a busy node)
  HOPSCOPE_BPF_BATCH_PAUSE_MS  pause after a small read of probe output so lines batch up (3; 0 = off)
  HOPSCOPE_BPF_EVENT_BUDGET    per-event records per probe per second sent to /events (200; 0 = counts only); the
                               rest are counted in the kernel (metrics stay exact) and reported as suppressed
  HOPSCOPE_BPF_FLUSH_MS        period of the kernel count flush to /metrics (1000)
  HOPSCOPE_LOG_LEVEL           pino level (info)`;

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max)
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  return v;
}

function pow2(v: number, name: string): number {
  if ((v & (v - 1)) !== 0) throw new ConfigError(`${name} must be a power of two, got ${v}`);
  return v;
}

const list = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** 127.0.0.0/8, ::1, localhost: the only binds allowed without a token. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

// A Kubernetes label key: an optional DNS-subdomain prefix and a name of up to 63 characters.
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function scanMs(env: NodeJS.ProcessEnv): number {
  const v = int(env, 'HOPSCOPE_BPF_SCAN_MS', 15_000, 0, 3_600_000);
  if (v > 0 && v < 500) throw new ConfigError(`HOPSCOPE_BPF_SCAN_MS must be 0 or at least 500, got ${v}`);
  return v;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ExporterConfig {
  const probes = env.HOPSCOPE_BPF_PROBES
    ? env.HOPSCOPE_BPF_PROBES.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : DEFAULT_PROBES;
  const known = new Set(ALL_PROBES.map((p) => p.name));
  const unknown = probes.filter((p) => !known.has(p));
  if (unknown.length)
    throw new ConfigError(
      `HOPSCOPE_BPF_PROBES: unknown probe(s) ${unknown.join(', ')}; available: ${[...known].join(', ')}`
    );
  const timing = env.HOPSCOPE_BPF_REPLAY_TIMING ?? 'original';
  if (timing !== 'original' && timing !== 'fast')
    throw new ConfigError(`HOPSCOPE_BPF_REPLAY_TIMING must be "original" or "fast", got "${timing}"`);
  const host = env.HOPSCOPE_BPF_HOST ?? '127.0.0.1';
  if (!host) throw new ConfigError('HOPSCOPE_BPF_HOST must not be empty');
  const token = env.HOPSCOPE_BPF_TOKEN || undefined;
  if (token !== undefined && (token.length < 16 || /\s/.test(token)))
    throw new ConfigError(
      'HOPSCOPE_BPF_TOKEN must be at least 16 characters without spaces (e.g. openssl rand -hex 24)'
    );
  if (!token && !isLoopback(host)) {
    throw new ConfigError(
      `HOPSCOPE_BPF_HOST=${host} is not a loopback address and HOPSCOPE_BPF_TOKEN is not set: /register and the event API would be open to the network. Set HOPSCOPE_BPF_TOKEN (e.g. openssl rand -hex 24), or bind 127.0.0.1`
    );
  }
  const podLabels =
    env.HOPSCOPE_BPF_POD_LABELS === undefined ? ['app.kubernetes.io/name'] : list(env.HOPSCOPE_BPF_POD_LABELS);
  for (const k of podLabels)
    if (!LABEL_KEY.test(k)) throw new ConfigError(`HOPSCOPE_BPF_POD_LABELS: "${k}" is not a Kubernetes label key`);
  if (podLabels.length > 8)
    throw new ConfigError(
      `HOPSCOPE_BPF_POD_LABELS: at most 8 labels (each multiplies the series), got ${podLabels.length}`
    );
  const kubeconfig = env.HOPSCOPE_BPF_KUBECONFIG || undefined;
  const headersTimeoutMs = int(env, 'HOPSCOPE_BPF_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = int(env, 'HOPSCOPE_BPF_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs)
    throw new ConfigError('HOPSCOPE_BPF_REQUEST_TIMEOUT_MS must not be below HOPSCOPE_BPF_HEADERS_TIMEOUT_MS');
  return {
    host,
    port: int(env, 'HOPSCOPE_BPF_PORT', 3302, 0, 65535),
    node: env.HOPSCOPE_BPF_NODE || hostname(),
    probes,
    bpftrace: env.HOPSCOPE_BPFTRACE || 'bpftrace',
    uprobeFiles: {
      node: list(env.HOPSCOPE_BPF_NODE_BINARY),
      libssl: list(env.HOPSCOPE_BPF_LIBSSL),
      libcuda: list(env.HOPSCOPE_BPF_LIBCUDA),
    },
    scanMs: scanMs(env),
    token,
    kubernetes: kubeconfig
      ? { mode: 'kubeconfig', kubeconfig }
      : env.KUBERNETES_SERVICE_HOST
        ? { mode: 'in-cluster' }
        : { mode: 'off' },
    podLabels,
    sseMaxClients: int(env, 'HOPSCOPE_BPF_SSE_MAX_CLIENTS', 16, 1, 1000),
    headersTimeoutMs,
    requestTimeoutMs,
    traceparentSampleEvery: int(env, 'HOPSCOPE_BPF_TRACEPARENT_SAMPLE', 10, 1, 1_000_000),
    ringSize: int(env, 'HOPSCOPE_BPF_RING_SIZE', 20_000, 1, 10_000_000),
    maxRangeMs: int(env, 'HOPSCOPE_BPF_MAX_RANGE_MS', 86_400_000, 1000, 30 * 86_400_000),
    maxEventsPerQuery: 10_000,
    replayFile: env.HOPSCOPE_BPF_REPLAY || undefined,
    replayTiming: timing,
    recordFile: env.HOPSCOPE_BPF_RECORD || undefined,
    logLevel: env.HOPSCOPE_LOG_LEVEL || 'info',
    perfPages: pow2(int(env, 'HOPSCOPE_BPF_PERF_PAGES', 512, 8, 65536), 'HOPSCOPE_BPF_PERF_PAGES'),
    batchPauseMs: int(env, 'HOPSCOPE_BPF_BATCH_PAUSE_MS', 3, 0, 100),
    eventBudget: int(env, 'HOPSCOPE_BPF_EVENT_BUDGET', 200, 0, 1_000_000),
    flushMs: int(env, 'HOPSCOPE_BPF_FLUSH_MS', 1000, 100, 60_000),
  };
}
