#!/usr/bin/env -S npx tsx
/**
 * hopscope-load: an open-loop load generator for OpenAI-compatible chat endpoints (ours by default, or your own vLLM /
 * TGI). Runs a named scenario or flags, records the run with the Hopscope proxy, exports its own measurements as
 * OpenTelemetry metrics, and gates CI on thresholds and regressions against a baseline run.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WITHIN_RUN_METRICS } from '../../contract/fallback';
import { RUN_ID_MESSAGE, RunId, WORKER_ID_MESSAGE, WorkerId } from '../../contract/runs';
import { Scenario } from '../../contract/scenario';
import {
  cleanupCommand,
  hasChaosMeshFaults,
  manifestsYaml,
  RefusedFault,
  scenarioManifests,
} from './chaos-mesh/cli-actions';
import { namespacesOf } from './chaos-mesh/cleanup';
import { loadDataset } from './load/dataset';
import { UsageError } from './load/errors';
import { expectedArrivals, validateProfile, type Profile, type ProfileKind } from './load/profiles';
import { parseMaxRegression, withinRun } from './load/regression';
import { listScenarios, loadScenario, revalidate, scenarioRelative, type LoadedScenario } from './load/scenario';
import { EXIT, runSession, type SessionPlan } from './load/session';
import { parseSlo, parseThreshold, THRESHOLD_METRICS, type Threshold } from './load/thresholds';
import { defaultTraceSample } from './load/trace-context';
import { chooseMetricsMode, otlpMetricsEndpoint } from './metrics/readers';
import { resendSpool } from './report/run-reporter';
import { defaultSpoolDir } from './report/spool';

export { UsageError };
export { thresholdValue } from './load/thresholds';
export { formatTable } from './report/table';

export const DEFAULT_PROXY_URL = 'http://127.0.0.1:3301';

export const HELP = `Usage: hopscope-load [--scenario NAME|FILE] [options]
       hopscope-load --resend FILE
       hopscope-load --list-scenarios
       hopscope-load --cleanup RUN_ID (--scenario NAME|FILE | --kube-namespace NS)

Open-loop load against an OpenAI-compatible /v1/chat/completions (SSE streaming by default). The run is registered
with the Hopscope proxy, its client-side measurements go to Prometheus live, and its record (summary, verdicts,
the trace ids of the slowest and failed requests) is posted at the end.

Scenario
  --scenario NAME|FILE  a scenario file (YAML or JSON), or a name in loadgen/scenarios ($HOPSCOPE_SCENARIOS_DIR);
                        the flags below override its fields
  --list-scenarios      the named scenarios and what they do
Target
  --target URL          base URL (default http://127.0.0.1:3310, the Hopscope chain gateway)
  --path PATH           request path (default /v1/chat/completions)
  --method POST|GET     (default POST)
  --api-key KEY         sent as Authorization: Bearer (default $OPENAI_API_KEY)
  --model LIST          models: a,b (equal weights) or a=3,b=1 (default hopscope-llama-8b-v1,hopscope-llama-8b-v2)
  --backend B           vllm|tgi|sglang|mix|none: sets x-hopscope-backend (default mix: vllm and tgi in turn;
                        use none for other servers)
  --routes MIX          route weights, e.g. chat=1,rag=2,agent=1 (chat: plain; rag: retrieval; agent: tool calls)
  --agent-ratio F       share of agent requests, 0..1, the other routes scaled to the rest (default 0.1, rest rag)
  --prompts FILE        a JSONL prompt dataset instead of the synthesiser (one {messages|prompt, route?, model?,
                        expected?: {documents?, task?}} a line)
  --max-tokens N        max_tokens per request (default 64)
  --no-stream           non-streaming requests (no TTFT/ITL/TPOT)
  --control URL|none    the chain's fault API, for the scenario's fault schedule (default http://127.0.0.1:3319);
                        token from $HOPSCOPE_CHAIN_TOKEN (the chain's own, required when it binds beyond loopback)
  --no-faults           do not apply the scenario's fault schedule
Chaos Mesh (faults with via: chaos-mesh; the cluster from $KUBECONFIG, ~/.kube/config or in-cluster)
  --dry-run             print the scenario's Chaos Mesh manifests as YAML documents on stdout and exit (no cluster)
  --cleanup RUN_ID      delete the Chaos Mesh resources labelled with that run id (after a killed driver) and exit
  --kube-namespace NS   the namespace --cleanup searches (default: the scenario's chaosMesh namespaces)
Load profile (open loop: requests leave on schedule whatever the server does)
  --profile P           constant|ramp|step|spike|sweep (default constant)
  --rps N               target rate; the end rate for ramp and sweep, the cap for step, the base for spike (default 5)
  --duration D          run length, e.g. 30s, 2m (default 30s)
  --start-rps N         ramp/step/sweep start rate
  --steps N             sweep: N constant rates from --start-rps to --rps, each held --duration / N (2..100); the
                        sweep stops early once the SLOs broke in two steps in a row (over-saturated)
  --step-rps N --step-every D    step increment and period
  --spike-rps N --spike-at D --spike-for D
  --arrivals A          uniform|poisson (default poisson)
  --seed N              prompt synthesiser and arrival seed (default 1)
Measurement
  --timeout D           per-request timeout (default 60s)
  --slo S               goodput SLOs, e.g. 'ttft_ms<=500,e2e_ms<=5000,tpot_ms<=50' (replaces the scenario's)
  --threshold T         repeatable, e.g. 'p99_ms<2000', 'error_rate<0.01' (added to the scenario's); exit 1 if any fails
  --connections N       HTTP connections (default 256)
  --max-in-flight N     client-side cap; arrivals beyond it are counted, not sent (default 10000)
  --no-traceparent      send no W3C traceparent (the trace id is then the server's traceresponse); by default
                        (--traceparent) each request carries one, so the chain's parent-based samplers keep its trace
  --trace-sample R      share of those traceparents sent sampled, 0..1 (default 1 — every request — up to 200 req/s;
                        above 200 req/s peak, 200/peak, about 200 sampled traces/s)
  --raw-body JSON       send this fixed body instead of prompts (benchmarks against trivial endpoints)
Run record (the proxy)
  --report URL|none     the proxy (default $HOPSCOPE_PROXY_URL or ${DEFAULT_PROXY_URL}); token from $HOPSCOPE_PROXY_TOKEN;
                        unreachable: one warning and the run goes on
  --run-id ID           the run id: baggage hopscope.run_id, label run_id (default <scenario>-<random>)
  --join                add this worker to a running run of the same id (distributed load); else a reused id exits 2
  --worker-id ID        this worker's name (default <host>-<pid>)
  --report-retry D      how long the finish is retried while the proxy or its database is down (default 30s);
                        then it is written to a spool file ($HOPSCOPE_LOAD_SPOOL_DIR, default ~/.hopscope/spool)
  --spool-dir DIR       where undelivered runs are written
  --resend FILE         deliver a spooled run (exit 0 delivered, 1 not delivered and kept, 2 not a spool file or
                        written for another proxy than the configured one: the token goes only to --report /
                        $HOPSCOPE_PROXY_URL)
Client metrics (hopscope_load_*, labels run_id and scenario)
  --metrics M           none|otlp|prometheus (default otlp when OTEL_EXPORTER_OTLP_ENDPOINT or
                        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, else prometheus)
  --metrics-host H      prometheus: the scrape target's address (default 127.0.0.1)
  --metrics-port N      prometheus: its port (default 0, any free port; the URL is registered with the run)
  --metrics-wait D      prometheus: longest wait at the end for a scrape with the final counts (default 10s)
CI gate
  --min-capacity N      sweep/ramp/step: exit 1 unless the capacity (the highest offered rate whose step held the SLOs,
                        i.e. 95% of its requests good) is ≥ N req/s; says the figure and the bottleneck (a threshold
                        'capacity_rps>=N')
  --baseline-run ID|FILE  compare with a run on the proxy, or a run's JSON summary / record file
  --max-regression R    e.g. 'p99_ms:+10%,ttft_p99_ms:+15%,error_rate:+0.01' (- for figures that must not fall,
                        e.g. 'goodput_rps:-5%', 'capacity_rps:-10%'); exit 1 and what regressed by how much.
                        'fallback_completion:-10%' needs no baseline: the fall-back model path's agent-task
                        completion against the primary path's in the same run; exit 1 with both figures
Output
  --json FILE           write the JSON summary there ('-' = stdout, the default; the table then goes to stderr)
  --quiet               no progress line
  --help                this text

Threshold and regression metrics: ${Object.keys(THRESHOLD_METRICS).join(', ')}
Every request carries W3C baggage hopscope.run_id=<id>,hopscope.load_test=true,hopscope.scenario=<scenario>.
Environment: HOPSCOPE_PROXY_URL, HOPSCOPE_PROXY_TOKEN, HOPSCOPE_CHAIN_TOKEN, OPENAI_API_KEY, OTEL_EXPORTER_OTLP_ENDPOINT,
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
  OTEL_METRIC_EXPORT_INTERVAL (ms, default 5000), HOPSCOPE_SCENARIOS_DIR, HOPSCOPE_LOAD_SPOOL_DIR.

Exit codes
  0    passed (every threshold and regression gate)
  1    a threshold or a regression gate failed (the table says which, and by how much)
  2    usage: bad flags, bad scenario or dataset (file:line:column), unknown baseline run, run id reused
  130  interrupted (SIGINT/SIGTERM): faults removed, the run posted as aborted

Examples
  hopscope-load --scenario single-turn-short
  hopscope-load --profile spike --rps 20 --spike-rps 80 --spike-at 20s --spike-for 10s --duration 60s --threshold 'p99_ms<4000'
  hopscope-load --profile sweep --start-rps 2 --rps 20 --steps 10 --duration 200s --slo 'ttft_ms<=1000' --min-capacity 8
CI recipe
  # on the main branch: record the baseline
  hopscope-load --scenario multi-hop-agent --run-id "baseline-$GIT_SHA" --json baseline.json --quiet
  # on a pull request: gate on it (by run id on the proxy, or by the file)
  hopscope-load --scenario multi-hop-agent --baseline-run baseline.json \\
    --max-regression 'p99_ms:+10%,ttft_p99_ms:+15%,error_rate:+0.01' --json run.json --quiet || exit $?`;

/** "250ms", "30s", "2m", "1h" or a bare number of seconds → seconds. */
export function parseDuration(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$/.exec(v);
  if (!m) throw new UsageError(`--${name} ${JSON.stringify(v)}: expected a duration like 500ms, 30s, 2m`);
  const n = Number(m[1]);
  return n * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2] ?? 's'];
}

/** The profile's highest rate (its rps, or a spike's or a start above it): what the default trace sample is for. */
function peakRps(l: Scenario['load']): number {
  return Math.max(l.rps, l.spikeRps ?? 0, l.startRps ?? 0);
}

function parseNum(
  name: string,
  v: string | undefined,
  opts: { int?: boolean; min?: number; max?: number } = {}
): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} ${JSON.stringify(v)}: expected a number`);
  if (opts.int && !Number.isInteger(n)) throw new UsageError(`--${name} ${v}: expected an integer`);
  if (opts.min !== undefined && n < opts.min) throw new UsageError(`--${name} ${v}: must be ≥ ${opts.min}`);
  if (opts.max !== undefined && n > opts.max) throw new UsageError(`--${name} ${v}: must be ≤ ${opts.max}`);
  return n;
}

/** `a,b` (equal weights) or `a=3,b=1`. */
function parseWeights(name: string, v: string, allowed?: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [k, w = '1'] = part.split('=').map((x) => x.trim());
    const n = Number(w);
    if (!k || !Number.isFinite(n) || n < 0)
      throw new UsageError(`--${name} ${JSON.stringify(part)}: expected name or name=weight (weight ≥ 0)`);
    if (allowed && !allowed.includes(k))
      throw new UsageError(`--${name}: unknown ${JSON.stringify(k)}; allowed: ${allowed.join(', ')}`);
    out[k] = n;
  }
  if (!Object.values(out).some((x) => x > 0))
    throw new UsageError(`--${name} needs at least one entry with a weight > 0`);
  return out;
}

export type CliPlan = SessionPlan;
/** `--dry-run`: the manifests to print; `--cleanup RUN_ID`: the run and where to look. */
export type DryRunPlan = { dryRun: string; chainFaults: number };
export type CleanupPlan = { cleanup: string; namespaces: string[] };
export interface ResendPlan {
  resend: string;
  /** The configured proxy (--report, else $HOPSCOPE_PROXY_URL, else the default): the only one the token goes to. */
  proxyUrl: string;
  reportGiven: boolean;
  token?: string;
  retryForMs: number;
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  scenario: { type: 'string' },
  'list-scenarios': { type: 'boolean' },
  target: { type: 'string' },
  path: { type: 'string' },
  method: { type: 'string' },
  'api-key': { type: 'string' },
  model: { type: 'string' },
  backend: { type: 'string' },
  routes: { type: 'string' },
  'agent-ratio': { type: 'string' },
  prompts: { type: 'string' },
  'max-tokens': { type: 'string' },
  'no-stream': { type: 'boolean' },
  control: { type: 'string' },
  'no-faults': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  cleanup: { type: 'string' },
  'kube-namespace': { type: 'string' },
  profile: { type: 'string' },
  rps: { type: 'string' },
  duration: { type: 'string' },
  'start-rps': { type: 'string' },
  steps: { type: 'string' },
  'min-capacity': { type: 'string' },
  'step-rps': { type: 'string' },
  'step-every': { type: 'string' },
  'spike-rps': { type: 'string' },
  'spike-at': { type: 'string' },
  'spike-for': { type: 'string' },
  arrivals: { type: 'string' },
  seed: { type: 'string' },
  timeout: { type: 'string' },
  slo: { type: 'string' },
  threshold: { type: 'string', multiple: true },
  connections: { type: 'string' },
  'max-in-flight': { type: 'string' },
  traceparent: { type: 'boolean' },
  'no-traceparent': { type: 'boolean' },
  'trace-sample': { type: 'string' },
  'raw-body': { type: 'string' },
  report: { type: 'string' },
  'run-id': { type: 'string' },
  join: { type: 'boolean' },
  'worker-id': { type: 'string' },
  'report-retry': { type: 'string' },
  'spool-dir': { type: 'string' },
  resend: { type: 'string' },
  metrics: { type: 'string' },
  'metrics-host': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-wait': { type: 'string' },
  'baseline-run': { type: 'string' },
  'max-regression': { type: 'string' },
  json: { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

/** Every option the parser accepts (the help must name each). */
export const OPTION_NAMES = Object.keys(OPTIONS);

function proxyUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const v = flag ?? env.HOPSCOPE_PROXY_URL ?? DEFAULT_PROXY_URL;
  if (v === 'none') return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new UsageError(`--report ${JSON.stringify(v)}: not a URL (or none)`);
  }
  if (!/^https?:$/.test(u.protocol)) throw new UsageError('--report must be an http:// or https:// URL, or none');
  return u.toString().replace(/\/+$/, '');
}

const safeId = (s: string): string =>
  s
    .replace(/[^A-Za-z0-9_.:-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128) || 'worker';

export function parseCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd()
): CliPlan | ResendPlan | DryRunPlan | CleanupPlan | 'help' | 'list' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: OPTIONS }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  if (values['list-scenarios']) return 'list';
  const s = (k: string) => values[k] as string | undefined;
  const retryForMs = Math.round(1000 * parseDuration('report-retry', s('report-retry') ?? '30s')!);
  if (retryForMs < 0 || retryForMs > 24 * 3600_000) throw new UsageError('--report-retry must be between 0 and 24h');
  if (s('resend') !== undefined) {
    const url = proxyUrl(s('report'), env);
    if (url === null) throw new UsageError('--resend needs a proxy: --report none makes no sense here');
    const reportGiven = s('report') !== undefined;
    return {
      resend: resolve(cwd, s('resend')!),
      proxyUrl: url,
      reportGiven,
      token: env.HOPSCOPE_PROXY_TOKEN,
      retryForMs,
    };
  }

  // The scenario (or every default), then the flags over it.
  let loaded: LoadedScenario | undefined;
  if (s('scenario') !== undefined) loaded = loadScenario(s('scenario')!, env, cwd);
  if (s('cleanup') !== undefined) {
    if (!RunId.safeParse(s('cleanup')).success)
      throw new UsageError(`--cleanup ${JSON.stringify(s('cleanup'))}: not a run id`);
    const ns = s('kube-namespace');
    const cm = loaded?.scenario.chaosMesh;
    if (ns === undefined && !cm)
      throw new UsageError(
        '--cleanup needs where to look: --kube-namespace NS, or --scenario with a chaosMesh section'
      );
    return { cleanup: s('cleanup')!, namespaces: ns !== undefined ? [ns] : namespacesOf(cm!) };
  }
  const sc: Scenario = structuredClone(loaded?.scenario ?? Scenario.parse({ name: 'ad-hoc' }));
  const name = loaded?.name ?? 'ad-hoc';
  if (s('target') !== undefined) {
    let target: URL;
    try {
      target = new URL(s('target')!);
    } catch {
      throw new UsageError(`--target ${JSON.stringify(s('target'))}: not a URL`);
    }
    if (!/^https?:$/.test(target.protocol)) throw new UsageError('--target must be an http:// or https:// URL');
    sc.target.url = target.toString();
  }
  if (s('path') !== undefined) sc.target.path = s('path')!;
  const method = (s('method') ?? 'POST').toUpperCase();
  if (method !== 'POST' && method !== 'GET') throw new UsageError('--method must be POST or GET');
  if (s('backend') !== undefined) {
    if (!['vllm', 'tgi', 'sglang', 'mix', 'none'].includes(s('backend')!))
      throw new UsageError('--backend must be vllm, tgi, sglang, mix or none');
    sc.target.backend = s('backend') as Scenario['target']['backend'];
  }
  if (s('control') !== undefined) sc.target.control = s('control')!;
  if (s('model') !== undefined) sc.models = parseWeights('model', s('model')!);
  if (s('routes') !== undefined)
    sc.routes = { chat: 0, rag: 0, agent: 0, ...parseWeights('routes', s('routes')!, ['chat', 'rag', 'agent']) };
  const agentRatio = parseNum('agent-ratio', s('agent-ratio'), { min: 0, max: 1 });
  if (agentRatio !== undefined) {
    const rest = sc.routes.chat + sc.routes.rag;
    sc.routes =
      rest > 0
        ? {
            chat: ((1 - agentRatio) * sc.routes.chat) / rest,
            rag: ((1 - agentRatio) * sc.routes.rag) / rest,
            agent: agentRatio,
          }
        : { chat: 0, rag: 1 - agentRatio, agent: agentRatio };
  }
  if (s('prompts') !== undefined)
    sc.prompts = { kind: 'dataset', file: resolve(cwd, s('prompts')!), order: 'sequential' };
  const maxTokens = parseNum('max-tokens', s('max-tokens'), { int: true, min: 1, max: 32768 });
  if (maxTokens !== undefined) sc.request.maxTokens = maxTokens;
  if (values['no-stream']) sc.request.stream = false;
  if (values.traceparent) sc.request.traceparent = true;
  if (values['no-traceparent']) sc.request.traceparent = false;
  const traceSample = parseNum('trace-sample', s('trace-sample'), { min: 0, max: 1 });
  if (traceSample !== undefined) sc.request.traceSample = traceSample;
  const timeoutS = parseDuration('timeout', s('timeout'));
  if (timeoutS !== undefined) {
    if (timeoutS <= 0 || timeoutS > 3600) throw new UsageError('--timeout must be > 0 and ≤ 1h');
    sc.request.timeout = timeoutS;
  }
  const l = sc.load;
  if (s('profile') !== undefined) l.profile = s('profile') as ProfileKind;
  if (s('arrivals') !== undefined) l.arrivals = s('arrivals') as Profile['arrivals'];
  l.rps = parseNum('rps', s('rps')) ?? l.rps;
  l.duration = parseDuration('duration', s('duration')) ?? l.duration;
  l.startRps = parseNum('start-rps', s('start-rps')) ?? l.startRps;
  l.steps = parseNum('steps', s('steps'), { int: true, min: 2, max: 100 }) ?? l.steps;
  l.stepRps = parseNum('step-rps', s('step-rps')) ?? l.stepRps;
  l.stepEvery = parseDuration('step-every', s('step-every')) ?? l.stepEvery;
  l.spikeRps = parseNum('spike-rps', s('spike-rps')) ?? l.spikeRps;
  l.spikeAt = parseDuration('spike-at', s('spike-at')) ?? l.spikeAt;
  l.spikeFor = parseDuration('spike-for', s('spike-for')) ?? l.spikeFor;
  l.seed = parseNum('seed', s('seed'), { int: true }) ?? l.seed;
  l.connections = parseNum('connections', s('connections'), { int: true, min: 1, max: 10000 }) ?? l.connections;
  l.maxInFlight = parseNum('max-in-flight', s('max-in-flight'), { int: true, min: 1, max: 1_000_000 }) ?? l.maxInFlight;
  const profile: Profile = {
    kind: l.profile,
    rps: l.rps,
    durationS: l.duration,
    startRps: l.startRps,
    stepRps: l.stepRps,
    stepEveryS: l.stepEvery,
    spikeRps: l.spikeRps,
    spikeAtS: l.spikeAt,
    spikeForS: l.spikeFor,
    steps: l.steps,
    arrivals: l.arrivals,
  };
  try {
    validateProfile(profile);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (expectedArrivals(profile) > 50_000_000)
    throw new UsageError(
      `this profile would send about ${expectedArrivals(profile)} requests; refusing (more than 50 million)`
    );
  if (s('slo') !== undefined) {
    try {
      sc.slo = parseSlo(s('slo')!);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  for (const t of (values.threshold as string[] | undefined) ?? []) {
    try {
      parseThreshold(t);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    sc.thresholds.push(t);
  }
  const minCapacity = parseNum('min-capacity', s('min-capacity'), { min: 0 });
  if (minCapacity !== undefined) {
    if (!['sweep', 'ramp', 'step'].includes(profile.kind))
      throw new UsageError(`--min-capacity needs a sweep, ramp or step profile (not ${profile.kind}): --profile sweep`);
    sc.thresholds.push(`capacity_rps>=${minCapacity}`);
  }
  if (s('max-regression') !== undefined) {
    try {
      parseMaxRegression(s('max-regression')!);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    sc.maxRegression = s('max-regression');
  }
  if (values['no-faults']) sc.faults = [];
  // One schema decides what a run is, whether its fields came from a file or from flags.
  const final = revalidate(
    sc,
    loaded
      ? `scenario ${loaded.name} with the command-line flags is not valid`
      : 'the command-line flags do not make a valid run'
  );
  const thresholds: Threshold[] = final.thresholds.map((t) => parseThreshold(t));
  const chainFaults = final.faults.filter((f) => f.via === 'chain').length;
  if (chainFaults && final.target.control === 'none' && !values['dry-run'])
    throw new UsageError(
      `the scenario has ${chainFaults} fault(s) on the chain but no fault API (--control none): give --control URL or --no-faults`
    );

  const report = proxyUrl(s('report'), env);
  const runId = s('run-id') ?? `${name === 'ad-hoc' ? 'run' : name.slice(0, 110)}-${randomBytes(4).toString('hex')}`;
  if (!RunId.safeParse(runId).success) throw new UsageError(`--run-id ${JSON.stringify(runId)}: ${RUN_ID_MESSAGE}`);
  if (hasChaosMeshFaults(final) || values['dry-run']) {
    let manifests;
    try {
      manifests = scenarioManifests(final, runId);
    } catch (e) {
      if (!(e instanceof RefusedFault)) throw e;
      throw new UsageError(`the scenario's Chaos Mesh faults cannot be made:\n${e.message}`);
    }
    if (values['dry-run']) return { dryRun: manifestsYaml(manifests), chainFaults };
  }
  const workerId = s('worker-id') ?? safeId(`${hostname()}-${process.pid}`);
  if (!WorkerId.safeParse(workerId).success)
    throw new UsageError(`--worker-id ${JSON.stringify(workerId)}: ${WORKER_ID_MESSAGE}`);
  if (values.join && !report) throw new UsageError('--join adds a worker to a run on the proxy: it needs --report URL');

  const metricsFlag = s('metrics');
  if (metricsFlag !== undefined && !['none', 'otlp', 'prometheus'].includes(metricsFlag))
    throw new UsageError('--metrics must be none, otlp or prometheus');
  const mode = chooseMetricsMode(metricsFlag, env);
  if (mode === 'otlp' && !otlpMetricsEndpoint(env))
    throw new UsageError('--metrics otlp needs OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)');
  const metricsPort = parseNum('metrics-port', s('metrics-port'), { int: true, min: 0, max: 65535 });
  const waitS = parseDuration('metrics-wait', s('metrics-wait') ?? '10s')!;
  if (waitS < 0 || waitS > 600) throw new UsageError('--metrics-wait must be between 0 and 10m');

  const rules = final.maxRegression ? parseMaxRegression(final.maxRegression) : undefined;
  const baselineRef = s('baseline-run');
  if (baselineRef !== undefined && !rules)
    throw new UsageError(
      "--baseline-run needs --max-regression (or the scenario's maxRegression), e.g. --max-regression 'p99_ms:+10%'"
    );
  if (s('max-regression') !== undefined && baselineRef === undefined && !rules!.every(withinRun))
    throw new UsageError(
      `--max-regression needs --baseline-run ID|FILE (only ${WITHIN_RUN_METRICS.join(', ')} is judged within the run)`
    );

  const prompts =
    final.prompts.kind === 'dataset'
      ? {
          kind: 'dataset' as const,
          lines: loadDataset(scenarioRelative(loaded, final.prompts.file, cwd)),
          order: final.prompts.order,
        }
      : { kind: 'synth' as const, options: final.prompts };
  const models = Object.keys(final.models).filter((m) => final.models[m] > 0);
  return {
    load: {
      target: final.target.url,
      path: final.target.path,
      method: method as 'POST' | 'GET',
      profile,
      stream: final.request.stream,
      models,
      modelWeights: final.models,
      backend: final.target.backend,
      agentRatio: final.routes.agent / (final.routes.chat + final.routes.rag + final.routes.agent),
      routes: final.routes,
      prompts,
      maxTokens: final.request.maxTokens,
      seed: final.load.seed,
      runId,
      scenario: name,
      timeoutMs: Math.round(final.request.timeout * 1000),
      connections: final.load.connections,
      maxInFlight: final.load.maxInFlight,
      slo: final.slo,
      traceparent: final.request.traceparent,
      traceSample: final.request.traceSample ?? defaultTraceSample(peakRps(final.load)),
      apiKey: s('api-key') ?? env.OPENAI_API_KEY,
      rawBody: s('raw-body'),
    },
    scenario: { name, ...(loaded ? { file: loaded.file } : {}), resolved: final },
    thresholds,
    faults: final.faults,
    control: final.target.control.replace(/\/+$/, ''),
    report: report
      ? {
          url: report,
          token: env.HOPSCOPE_PROXY_TOKEN,
          join: Boolean(values.join),
          spoolDir: s('spool-dir') ?? defaultSpoolDir(env),
          retryForMs,
        }
      : null,
    workerId,
    metrics: {
      mode,
      host: s('metrics-host') ?? '127.0.0.1',
      port: metricsPort ?? 0,
      waitMaxMs: Math.round(waitS * 1000),
      portGiven: metricsPort !== undefined,
    },
    ...(rules && (baselineRef !== undefined || rules.some(withinRun))
      ? { baseline: { ...(baselineRef !== undefined ? { ref: baselineRef } : {}), rules } }
      : {}),
    jsonOut: s('json') ?? '-',
    quiet: Boolean(values.quiet),
  };
}

function listing(env: NodeJS.ProcessEnv): string {
  const lines = listScenarios(env).map((n) => {
    try {
      const sc = loadScenario(n, env).scenario;
      return `${n.padEnd(22)} ${sc.description?.split('\n')[0] ?? ''}`;
    } catch (err) {
      return `${n.padEnd(22)} (invalid: ${(err as Error).message.split('\n')[1]?.trim() ?? (err as Error).message})`;
    }
  });
  return lines.length ? lines.join('\n') : '(no scenarios found)';
}

export interface MainOptions {
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  cwd?: string;
}

export async function main(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
  opts: MainOptions = {}
): Promise<number> {
  const env = opts.env ?? process.env;
  let plan: ReturnType<typeof parseCli>;
  try {
    plan = parseCli(argv, env, opts.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`hopscope-load: ${e.message}\nRun hopscope-load --help for usage.\n`);
    return EXIT.usage;
  }
  if (plan === 'help') {
    out(`${HELP}\n`);
    return EXIT.pass;
  }
  if (plan === 'list') {
    out(`${listing(env)}\n`);
    return EXIT.pass;
  }
  if ('dryRun' in plan) {
    out(plan.dryRun);
    if (plan.chainFaults) err(`hopscope-load: ${plan.chainFaults} fault(s) via chain have no manifest (not printed)\n`);
    return EXIT.pass;
  }
  if ('cleanup' in plan) return cleanupCommand(plan.cleanup, plan.namespaces, out, err);
  if ('resend' in plan) {
    try {
      const r = await resendSpool(plan.resend, {
        proxyUrl: plan.proxyUrl,
        reportGiven: plan.reportGiven,
        token: plan.token,
        retryForMs: plan.retryForMs,
        warn: (m) => err(`hopscope-load: ${m}\n`),
      });
      if (r.delivered) {
        out(`delivered ${plan.resend}\n`);
        return EXIT.pass;
      }
      err(`hopscope-load: not delivered (${r.message}); ${plan.resend} is kept\n`);
      return EXIT.failed;
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      err(`hopscope-load: ${e.message}\n`);
      return EXIT.usage;
    }
  }
  const ac = new AbortController();
  const onSig = (): void => ac.abort();
  opts.signal?.addEventListener('abort', onSig, { once: true });
  // Only the real CLI listens to signals; a caller passing its own signal keeps its process's handlers.
  const own = !opts.signal;
  if (own) {
    process.once('SIGINT', onSig);
    process.once('SIGTERM', onSig);
  }
  try {
    return await runSession(plan, { out, err, signal: ac.signal, tty: Boolean(process.stderr.isTTY), env });
  } finally {
    if (own) {
      process.off('SIGINT', onSig);
      process.off('SIGTERM', onSig);
    }
  }
}

if (process.argv[1]?.endsWith('loadgen/src/cli.ts')) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
