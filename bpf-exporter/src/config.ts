/** Exporter configuration: defaults, env overrides, and a clear error for every bad value. */
import { hostname } from 'node:os';
import { ALL_PROBES, DEFAULT_PROBES } from './probes';

export interface ExporterConfig {
  host: string;
  port: number;
  node: string;
  probes: string[];
  bpftrace: string;
  nodeBinary: string;
  libssl: string[];
  libcuda: string;
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
  HOPSCOPE_BPF_HOST            bind address (127.0.0.1)
  HOPSCOPE_BPF_PORT            port (3302; 0 = any free port)
  HOPSCOPE_BPF_NODE            node name put on every event and metric (this host's name)
  HOPSCOPE_BPF_PROBES          comma list of probes (${DEFAULT_PROBES.join(',')}); available: ${ALL_PROBES.map((p) => p.name).join(', ')}
  HOPSCOPE_BPFTRACE            bpftrace binary (bpftrace from PATH)
  HOPSCOPE_BPF_NODE_BINARY     node binary for the TLSWrap / SSL_write uprobes (${process.execPath})
  HOPSCOPE_BPF_LIBSSL          comma list of OpenSSL 3 libraries (/usr/lib/x86_64-linux-gnu/libssl.so.3)
  HOPSCOPE_BPF_LIBCUDA         CUDA driver library (/usr/lib/x86_64-linux-gnu/libcuda.so.1)
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
  if (!Number.isInteger(v) || v < min || v > max) throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  return v;
}

function pow2(v: number, name: string): number {
  if ((v & (v - 1)) !== 0) throw new ConfigError(`${name} must be a power of two, got ${v}`);
  return v;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ExporterConfig {
  const probes = env.HOPSCOPE_BPF_PROBES ? env.HOPSCOPE_BPF_PROBES.split(',').map((s) => s.trim()).filter(Boolean) : DEFAULT_PROBES;
  const known = new Set(ALL_PROBES.map((p) => p.name));
  const unknown = probes.filter((p) => !known.has(p));
  if (unknown.length) throw new ConfigError(`HOPSCOPE_BPF_PROBES: unknown probe(s) ${unknown.join(', ')}; available: ${[...known].join(', ')}`);
  const timing = env.HOPSCOPE_BPF_REPLAY_TIMING ?? 'original';
  if (timing !== 'original' && timing !== 'fast') throw new ConfigError(`HOPSCOPE_BPF_REPLAY_TIMING must be "original" or "fast", got "${timing}"`);
  const host = env.HOPSCOPE_BPF_HOST ?? '127.0.0.1';
  if (!host) throw new ConfigError('HOPSCOPE_BPF_HOST must not be empty');
  return {
    host,
    port: int(env, 'HOPSCOPE_BPF_PORT', 3302, 0, 65535),
    node: env.HOPSCOPE_BPF_NODE || hostname(),
    probes,
    bpftrace: env.HOPSCOPE_BPFTRACE || 'bpftrace',
    nodeBinary: env.HOPSCOPE_BPF_NODE_BINARY || process.execPath,
    libssl: (env.HOPSCOPE_BPF_LIBSSL ?? '/usr/lib/x86_64-linux-gnu/libssl.so.3').split(',').map((s) => s.trim()).filter(Boolean),
    libcuda: env.HOPSCOPE_BPF_LIBCUDA || '/usr/lib/x86_64-linux-gnu/libcuda.so.1',
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
