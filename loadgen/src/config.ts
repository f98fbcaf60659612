/**
 * The chain's configuration: defaults, environment overrides (HOPSCOPE_*), and one clear error per bad value.
 * Tests pass overrides directly (ports 0, a small time scale); the demo uses the defaults.
 */
import { z } from 'zod';
import { DEFAULT_REPLICAS, HOPS, type HopName } from './chain/topology';

const Port = z.number().int().min(0).max(65535);

export const ChainConfig = z.object({
  host: z.string().min(1),
  gatewayPort: Port,
  controlPort: Port,
  /** Port of every other hop / exporter listener: 0 = any free port (Prometheus finds them via the control API's /targets). */
  hopPort: Port,
  /** Multiplies every simulated duration (prefill, decode, embedding, retrieval…); 0.05 makes tests 20× faster. */
  timeScale: z.number().positive().max(100),
  tracing: z.boolean(),
  otlpEndpoint: z.string().url(),
  /** OTLP/HTTP encoding: protobuf (the OpenTelemetry default, cheaper) or JSON. */
  otlpProtocol: z.enum(['http/protobuf', 'http/json']),
  samplerBaseRate: z.number().min(0.01).max(1),
  samplerMinRate: z.number().min(0.0001).max(1),
  samplerP99KneeMs: z.number().positive(),
  /** off = a fixed-rate sampler (tests that count spans); errors are still always kept. */
  samplerAdaptive: z.boolean(),
  namespace: z.string().regex(/^[a-z0-9-]+$/, 'a DNS label'),
  replicas: z.record(z.enum(HOPS), z.number().int().min(1).max(8)),
  vectorCacheHitRate: z.number().min(0).max(1),
  ragTopK: z.number().int().min(1).max(50),
  /** Hops whose incoming link uses real TLS (a new handshake per call, so a kernel probe sees each one). */
  tlsHops: z.array(z.enum(HOPS)),
  /** How long a caller waits for a hop before recording a timeout (real ms, not scaled). */
  hopTimeoutMs: z.number().int().positive().max(600_000),
  gpuNodes: z.number().int().min(1).max(8),
  gpusPerNode: z.number().int().min(1).max(8),
  mig: z.boolean(),
  /** false reproduces dcgm-exporter configs where DCGM_FI_PROF_SM_ACTIVE is commented out (the default CSV). */
  dcgmSmActive: z.boolean(),
  dcgmHostnameLabel: z.enum(['Hostname', 'hostname']),
  exporterUrl: z.string().url().optional(),
  seed: z.number().int(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
});
export type ChainConfig = z.infer<typeof ChainConfig>;

export const DEFAULTS: ChainConfig = {
  host: '127.0.0.1',
  gatewayPort: 3310,
  controlPort: 3319,
  hopPort: 0,
  timeScale: 1,
  tracing: true,
  otlpEndpoint: 'http://127.0.0.1:3301/v1/traces',
  otlpProtocol: 'http/protobuf',
  samplerBaseRate: 1,
  samplerMinRate: 0.01,
  samplerP99KneeMs: 4000,
  samplerAdaptive: true,
  namespace: 'hopscope-demo',
  replicas: { ...DEFAULT_REPLICAS },
  vectorCacheHitRate: 0.35,
  ragTopK: 5,
  tlsHops: ['tool'],
  hopTimeoutMs: 15_000,
  gpuNodes: 2,
  gpusPerNode: 4,
  mig: false,
  dcgmSmActive: true,
  dcgmHostnameLabel: 'Hostname',
  seed: 42,
  logLevel: 'info',
};

const num = (v: string): number => (v.trim() === '' ? NaN : Number(v));
const bool = (name: string, v: string): boolean => {
  if (/^(1|true|on|yes)$/i.test(v)) return true;
  if (/^(0|false|off|no)$/i.test(v)) return false;
  throw new Error(`${name}=${v}: expected on|off`);
};

/** Maps HOPSCOPE_* variables onto config keys. */
function fromEnv(env: NodeJS.ProcessEnv): Partial<ChainConfig> {
  const out: Record<string, unknown> = {};
  const map: Array<[string, keyof ChainConfig, (v: string, n: string) => unknown]> = [
    ['HOPSCOPE_CHAIN_HOST', 'host', (v) => v],
    ['HOPSCOPE_GATEWAY_PORT', 'gatewayPort', num],
    ['HOPSCOPE_CONTROL_PORT', 'controlPort', num],
    ['HOPSCOPE_HOP_PORT', 'hopPort', num],
    ['HOPSCOPE_TIME_SCALE', 'timeScale', num],
    ['HOPSCOPE_TRACING', 'tracing', (v, n) => bool(n, v)],
    ['HOPSCOPE_OTLP_ENDPOINT', 'otlpEndpoint', (v) => v],
    ['HOPSCOPE_OTLP_PROTOCOL', 'otlpProtocol', (v) => v],
    ['HOPSCOPE_SAMPLER_BASE_RATE', 'samplerBaseRate', num],
    ['HOPSCOPE_SAMPLER_MIN_RATE', 'samplerMinRate', num],
    ['HOPSCOPE_SAMPLER_P99_KNEE_MS', 'samplerP99KneeMs', num],
    ['HOPSCOPE_SAMPLER_ADAPTIVE', 'samplerAdaptive', (v, n) => bool(n, v)],
    ['HOPSCOPE_NAMESPACE', 'namespace', (v) => v],
    ['HOPSCOPE_VECTOR_CACHE_HIT_RATE', 'vectorCacheHitRate', num],
    ['HOPSCOPE_RAG_TOP_K', 'ragTopK', num],
    ['HOPSCOPE_TLS_HOPS', 'tlsHops', (v) => v.split(',').map((s) => s.trim()).filter(Boolean)],
    ['HOPSCOPE_HOP_TIMEOUT_MS', 'hopTimeoutMs', num],
    ['HOPSCOPE_GPU_NODES', 'gpuNodes', num],
    ['HOPSCOPE_GPUS_PER_NODE', 'gpusPerNode', num],
    ['HOPSCOPE_MIG', 'mig', (v, n) => bool(n, v)],
    ['HOPSCOPE_DCGM_SM_ACTIVE', 'dcgmSmActive', (v, n) => bool(n, v)],
    ['HOPSCOPE_DCGM_HOSTNAME_LABEL', 'dcgmHostnameLabel', (v) => v],
    ['HOPSCOPE_EXPORTER_URL', 'exporterUrl', (v) => v],
    ['HOPSCOPE_SEED', 'seed', num],
    ['HOPSCOPE_LOG_LEVEL', 'logLevel', (v) => v],
  ];
  for (const [name, key, parse] of map) {
    const v = env[name];
    if (v !== undefined && v !== '') out[key] = parse(v, name);
  }
  if (env.HOPSCOPE_REPLICAS) {
    // e.g. "rag=3,llm-vllm=2"
    const replicas: Record<string, number> = {};
    for (const part of env.HOPSCOPE_REPLICAS.split(',')) {
      const [k, v] = part.split('=');
      replicas[k.trim()] = num(v ?? '');
    }
    out.replicas = replicas;
  }
  return out as Partial<ChainConfig>;
}

/** Defaults ← env ← overrides, validated; throws one Error listing every bad value. */
export function loadChainConfig(overrides: Partial<ChainConfig> = {}, env: NodeJS.ProcessEnv = process.env): ChainConfig {
  const fromE = fromEnv(env);
  const merged = {
    ...DEFAULTS,
    ...fromE,
    ...overrides,
    replicas: { ...DEFAULTS.replicas, ...(fromE.replicas ?? {}), ...(overrides.replicas ?? {}) } as Record<HopName, number>,
  };
  const parsed = ChainConfig.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(config)'}: ${i.message}`);
    throw new Error(`invalid chain configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.samplerMinRate > parsed.data.samplerBaseRate) {
    throw new Error('invalid chain configuration:\n  samplerMinRate: must not exceed samplerBaseRate');
  }
  return parsed.data;
}
