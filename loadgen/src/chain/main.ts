/**
 * hopscope-chain: runs the simulated AI chain (all hops, dcgm-exporters, control API) in this process, optionally
 * under a steady open-loop load, until SIGINT/SIGTERM. Configuration: flags below or HOPSCOPE_* variables.
 */
import { parseArgs } from 'node:util';
import { runLoad } from '../load/driver';
import { makeLogger } from '../log';
import { loadChainConfig, type ChainConfig } from '../config';
import { startSplitChain } from './split';
import { startChain } from './start';

const HELP = `Usage: tsx loadgen/src/chain/main.ts [options]

Runs the simulated chain gateway → embedding → vector-cache → rag → llm-{vllm,tgi,sglang} → agent → tool on 127.0.0.1.
  --gateway-port N     (default 3310, env HOPSCOPE_GATEWAY_PORT; 0 = any free port)
  --control-port N     (default 3319, env HOPSCOPE_CONTROL_PORT)
  --time-scale F       multiplies every simulated duration (default 1, env HOPSCOPE_TIME_SCALE)
  --otlp-endpoint URL  OTLP/HTTP traces endpoint (default http://127.0.0.1:3301/v1/traces, env HOPSCOPE_OTLP_ENDPOINT)
  --no-tracing         no OpenTelemetry SDK at all (env HOPSCOPE_TRACING=off)
  --split              one process per hop replica (each pod its own pid, registered with the bpf-exporter);
                       env HOPSCOPE_SPLIT=on. The demo uses it so kernel events land on the right pod.
  --steady-rps N       also drive a steady open-loop load of N requests/s against the gateway (the demo uses 4)
  --help               this text
Other settings (env): HOPSCOPE_REPLICAS=rag=2,llm-vllm=2  HOPSCOPE_VECTOR_CACHE_HIT_RATE=0.35  HOPSCOPE_TLS_HOPS=tool
  HOPSCOPE_DCGM_SM_ACTIVE=on|off  HOPSCOPE_DCGM_HOSTNAME_LABEL=Hostname|hostname  HOPSCOPE_MIG=on|off
  HOPSCOPE_EXPORTER_URL=http://127.0.0.1:3302 (pid → pod registration)  HOPSCOPE_SAMPLER_BASE_RATE=1  HOPSCOPE_LOG_LEVEL=info
  HOPSCOPE_EXPORTER_TOKEN (the exporter's HOPSCOPE_BPF_TOKEN, sent as Authorization: Bearer on /register; needed when it binds beyond loopback)
  HOPSCOPE_CHAIN_HOST=127.0.0.1 (beyond loopback needs HOPSCOPE_CHAIN_TOKEN: the control API then wants Authorization: Bearer)
  HOPSCOPE_LLM_MAX_NUM_SEQS=N, HOPSCOPE_LLM_NUM_GPU_BLOCKS=N (the LLM engines' limits, vLLM's --max-num-seqs and
    --num-gpu-blocks-override; unset = vLLM/SGLang 32 sequences, TGI 24, 2048 blocks of 16 tokens)
  HOPSCOPE_CUDA_STAND_IN=on|off (LLM replicas allocate through the stand-in libcuda.so.1 built into .cache/native/)
  HOPSCOPE_VLLM_METRIC_NAMES=current|legacy (legacy: the simulated vLLM exposes an older release's metric names,
    vllm:gpu_cache_usage_perc, vllm:gpu_prefix_cache_*_total, vllm:time_per_output_token_seconds)
OpenTelemetry (these win over HOPSCOPE_OTLP_ENDPOINT/HOPSCOPE_OTLP_PROTOCOL): OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_[TRACES_]HEADERS, OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=http/protobuf|http/json,
  OTEL_SERVICE_NAME (the chain's service.namespace; each hop is its own service.name), OTEL_RESOURCE_ATTRIBUTES,
  OTEL_SDK_DISABLED=true / OTEL_TRACES_EXPORTER=none (no tracing)`;

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      'gateway-port': { type: 'string' },
      'control-port': { type: 'string' },
      'time-scale': { type: 'string' },
      'otlp-endpoint': { type: 'string' },
      'no-tracing': { type: 'boolean' },
      'steady-rps': { type: 'string' },
      split: { type: 'boolean' },
    },
  }));
} catch (err) {
  console.error(`hopscope-chain: ${(err as Error).message}\n\n${HELP}`);
  process.exit(2);
}
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const overrides: Partial<ChainConfig> = {};
if (values['gateway-port'] !== undefined) overrides.gatewayPort = Number(values['gateway-port']);
if (values['control-port'] !== undefined) overrides.controlPort = Number(values['control-port']);
if (values['time-scale'] !== undefined) overrides.timeScale = Number(values['time-scale']);
if (values['otlp-endpoint'] !== undefined) overrides.otlpEndpoint = String(values['otlp-endpoint']);
if (values['no-tracing']) overrides.tracing = false;
const steadyRps = values['steady-rps'] !== undefined ? Number(values['steady-rps']) : 0;
if (!Number.isFinite(steadyRps) || steadyRps < 0 || steadyRps > 1000) {
  console.error('hopscope-chain: --steady-rps must be a number in [0, 1000]');
  process.exit(2);
}
let cfg: ChainConfig;
try {
  cfg = loadChainConfig(overrides);
} catch (err) {
  console.error(`hopscope-chain: ${(err as Error).message}`);
  process.exit(2);
}
const log = makeLogger(cfg.logLevel);
const split = Boolean(values.split) || /^(1|on|true|yes)$/i.test(process.env.HOPSCOPE_SPLIT ?? '');
const chain = await (split ? startSplitChain(cfg, log) : startChain({ ...cfg, logger: log })).catch((err) => {
  log.fatal({ err: (err as Error).message }, 'chain failed to start');
  process.exit(1);
});
const loadAbort = new AbortController();
if (steadyRps > 0) {
  // One long run (a day); restarted if it ever ends while the chain is up.
  const drive = async (): Promise<void> => {
    while (!loadAbort.signal.aborted) {
      const sum = await runLoad({
        target: chain.gatewayUrl,
        path: '/v1/chat/completions',
        method: 'POST',
        stream: true,
        profile: { kind: 'constant', rps: steadyRps, durationS: 86_400, arrivals: 'poisson' },
        models: ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2'],
        backend: 'mix',
        agentRatio: 0.1,
        maxTokens: 48,
        seed: Date.now() % 1e6,
        runId: 'demo-steady',
        timeoutMs: 30_000,
        connections: 64,
        maxInFlight: 2000,
        slo: { ttftMs: 1000, e2eMs: 5000 },
        traceparent: false,
        signal: loadAbort.signal,
        onProgress: (p) => {
          if (Math.round(p.elapsedS) % 30 === 0) log.info({ load: p }, 'steady load');
        },
      });
      log.info({ sent: sum.sent, errors: sum.errors.total }, 'steady load run ended');
    }
  };
  void drive();
}
let stopping = false;
const stop = async (sig: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  log.info({ sig }, 'stopping the chain');
  loadAbort.abort();
  await chain.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
