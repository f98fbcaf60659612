/**
 * The chain's configuration: defaults, environment overrides (HOPSCOPE_*, and the OpenTelemetry SDK's OTEL_* for
 * trace export, which win over their HOPSCOPE_OTLP_* fallbacks), and one clear error per bad value.
 * Tests pass overrides directly (ports 0, a small time scale); the demo uses the defaults.
 */
import { z } from 'zod';
import { parseOtelList } from '../../contract/otel-env';
import { formatZodIssue } from '../../contract/zod-error';
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
  /** The full OTLP/HTTP traces URL (…/v1/traces). */
  otlpEndpoint: z.string().url(),
  /** OTLP/HTTP encoding: protobuf (the OpenTelemetry default, cheaper) or JSON. */
  otlpProtocol: z.enum(['http/protobuf', 'http/json']),
  /** Headers sent with every export (OTEL_EXPORTER_OTLP_HEADERS, e.g. an API key). */
  otlpHeaders: z.record(z.string(), z.string()),
  /** `service.namespace` of every hop (OTEL_SERVICE_NAME names the chain as a whole; each hop is its own service.name). */
  serviceNamespace: z.string().min(1),
  /** Merged into every hop's resource (OTEL_RESOURCE_ATTRIBUTES); the hop's own identity attributes win. */
  resourceAttributes: z.record(z.string(), z.string()),
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
  /**
   * Bearer token for the exporter's /register (its HOPSCOPE_BPF_TOKEN; the proxy's setting of the same name), needed
   * when the exporter binds beyond loopback. Never logged; split mode's replica processes inherit it.
   */
  exporterToken: z.string().min(1).regex(/^\S+$/, 'must not contain whitespace').optional(),
  /** LLM replicas allocate through the stand-in CUDA driver (a real cuMemAlloc_v2 a kernel probe sees); off = simulated only. */
  cudaStandIn: z.boolean(),
  /** Ranks per LLM replica: > 1 makes each a tensor-parallel group, one process (pod) per rank in split mode. */
  tensorParallel: z.number().int().min(1).max(8),
  /** How long a tensor-parallel group's collective may take before its watchdog fails the step (real seconds). */
  executeModelTimeoutS: z.number().positive().max(3600),
  /** Bearer token the control API requires (all routes but /healthz and /targets); required to bind beyond loopback. */
  controlToken: z.string().min(1).regex(/^\S+$/, 'must not contain whitespace').optional(),
  /** current: vLLM's current metric names; legacy: an older release's (`vllm:gpu_cache_usage_perc`, …). */
  vllmMetricNames: z.enum(['current', 'legacy']),
  /**
   * The LLM engines' limits, as vLLM names them (llm/engine.ts engineOptionsFor): `--max-num-seqs` (the running batch)
   * and `--num-gpu-blocks-override` (the KV cache in blocks of 16 tokens); unset = each backend's simulated default.
   */
  llmMaxNumSeqs: z.number().int().min(1).max(4096).optional(),
  llmNumGpuBlocks: z.number().int().min(1).max(1_000_000).optional(),
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
  otlpHeaders: {},
  serviceNamespace: 'hopscope',
  resourceAttributes: {},
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
  cudaStandIn: true,
  tensorParallel: 1,
  executeModelTimeoutS: 300,
  vllmMetricNames: 'current',
  seed: 42,
  logLevel: 'info',
};

const num = (v: string): number => (v.trim() === '' ? NaN : Number(v));
const bool = (name: string, v: string): boolean => {
  if (/^(1|true|on|yes)$/i.test(v)) return true;
  if (/^(0|false|off|no)$/i.test(v)) return false;
  throw new Error(`${name}=${v}: expected on|off`);
};

export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

const first = (env: NodeJS.ProcessEnv, ...names: string[]): [string, string] | undefined => {
  for (const n of names) if (env[n] !== undefined && env[n]!.trim() !== '') return [n, env[n]!.trim()];
  return undefined;
};

/** OpenTelemetry SDK variables for trace export and resources (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). */
function otelFromEnv(env: NodeJS.ProcessEnv): Partial<ChainConfig> {
  const out: Partial<ChainConfig> = {};
  const traces = first(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = first(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  // The signal-specific URL is used as is; the base URL gets the traces path appended.
  if (traces) out.otlpEndpoint = traces[1];
  else if (base) out.otlpEndpoint = `${base[1].replace(/\/+$/, '')}/v1/traces`;
  const proto = first(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (proto) {
    if (proto[1] !== 'http/protobuf' && proto[1] !== 'http/json')
      throw new Error(`${proto[0]}=${proto[1]}: the chain exports over OTLP/HTTP; use http/protobuf or http/json`);
    out.otlpProtocol = proto[1];
  }
  const headers = {
    ...(env.OTEL_EXPORTER_OTLP_HEADERS
      ? parseOtelList('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS)
      : {}),
    ...(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
      ? parseOtelList('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS)
      : {}),
  };
  if (Object.keys(headers).length) out.otlpHeaders = headers;
  const resource = env.OTEL_RESOURCE_ATTRIBUTES
    ? parseOtelList('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES)
    : {};
  // service.name is each hop's own; the chain's name (OTEL_SERVICE_NAME, which wins over the attribute) is its namespace.
  const ns = env.OTEL_SERVICE_NAME?.trim() || resource['service.namespace'];
  if (ns) out.serviceNamespace = ns;
  if (Object.keys(resource).length) out.resourceAttributes = resource;
  if (/^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) out.tracing = false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter === 'none') out.tracing = false;
  else if (exporter && exporter !== 'otlp')
    throw new Error(`OTEL_TRACES_EXPORTER=${exporter}: the chain exports traces with otlp (or none)`);
  return out;
}

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
    [
      'HOPSCOPE_TLS_HOPS',
      'tlsHops',
      (v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
    ],
    ['HOPSCOPE_HOP_TIMEOUT_MS', 'hopTimeoutMs', num],
    ['HOPSCOPE_GPU_NODES', 'gpuNodes', num],
    ['HOPSCOPE_GPUS_PER_NODE', 'gpusPerNode', num],
    ['HOPSCOPE_MIG', 'mig', (v, n) => bool(n, v)],
    ['HOPSCOPE_DCGM_SM_ACTIVE', 'dcgmSmActive', (v, n) => bool(n, v)],
    ['HOPSCOPE_DCGM_HOSTNAME_LABEL', 'dcgmHostnameLabel', (v) => v],
    ['HOPSCOPE_EXPORTER_URL', 'exporterUrl', (v) => v],
    ['HOPSCOPE_EXPORTER_TOKEN', 'exporterToken', (v) => v.trim() || undefined],
    ['HOPSCOPE_CUDA_STAND_IN', 'cudaStandIn', (v, n) => bool(n, v)],
    ['HOPSCOPE_TP', 'tensorParallel', num],
    ['HOPSCOPE_EXECUTE_MODEL_TIMEOUT_SECONDS', 'executeModelTimeoutS', num],
    ['HOPSCOPE_CHAIN_TOKEN', 'controlToken', (v) => v],
    ['HOPSCOPE_VLLM_METRIC_NAMES', 'vllmMetricNames', (v) => v],
    ['HOPSCOPE_LLM_MAX_NUM_SEQS', 'llmMaxNumSeqs', num],
    ['HOPSCOPE_LLM_NUM_GPU_BLOCKS', 'llmNumGpuBlocks', num],
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
  // OTEL_* win over their HOPSCOPE_OTLP_* fallbacks; tracing stays off when either side turns it off.
  const otel = otelFromEnv(env);
  if (otel.tracing === false || out.tracing === false) otel.tracing = false;
  return { ...(out as Partial<ChainConfig>), ...otel };
}

/**
 * Why the control API must not start with this configuration (a non-loopback bind without a token), or undefined.
 * Checked where the control API runs (not in split mode's replica processes, which serve none).
 */
export function controlBindProblem(cfg: ChainConfig): string | undefined {
  if (isLoopback(cfg.host) || cfg.controlToken) return undefined;
  return `refusing to bind the control API to ${cfg.host} without a token: it injects faults (nftables rules among them). Set HOPSCOPE_CHAIN_TOKEN (callers send Authorization: Bearer <token>), or bind 127.0.0.1.`;
}

/** Defaults ← env ← overrides, validated; throws one Error listing every bad value. */
export function loadChainConfig(
  overrides: Partial<ChainConfig> = {},
  env: NodeJS.ProcessEnv = process.env
): ChainConfig {
  const fromE = fromEnv(env);
  const merged = {
    ...DEFAULTS,
    ...fromE,
    ...overrides,
    replicas: { ...DEFAULTS.replicas, ...(fromE.replicas ?? {}), ...(overrides.replicas ?? {}) } as Record<
      HopName,
      number
    >,
  };
  const parsed = ChainConfig.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${formatZodIssue(i, '(config)')}`);
    throw new Error(`invalid chain configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.samplerMinRate > parsed.data.samplerBaseRate) {
    throw new Error('invalid chain configuration:\n  samplerMinRate: must not exceed samplerBaseRate');
  }
  return parsed.data;
}
