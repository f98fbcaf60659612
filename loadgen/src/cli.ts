#!/usr/bin/env -S npx tsx
/**
 * hopscope-load: an open-loop load generator for OpenAI-compatible chat endpoints (ours by default, or your own vLLM /
 * TGI). Prints a live progress line, a table and a JSON summary; exits 1 when a --threshold fails, 2 on bad usage.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runLoad, type LoadOptions, type Summary } from './load/driver';
import { expectedArrivals, validateProfile, type Profile, type ProfileKind } from './load/profiles';
import { checkThreshold, parseSlo, parseThreshold, THRESHOLD_METRICS, type Threshold } from './load/thresholds';

export const HELP = `Usage: hopscope-load [options]

Open-loop load against an OpenAI-compatible /v1/chat/completions (SSE streaming by default).

Target
  --target URL          base URL (default http://127.0.0.1:3310, the Hopscope chain gateway)
  --path PATH           request path (default /v1/chat/completions)
  --method POST|GET     (default POST)
  --api-key KEY         sent as Authorization: Bearer (default $OPENAI_API_KEY)
  --model a,b           models, round-robin (default hopscope-llama-8b-v1,hopscope-llama-8b-v2)
  --backend B           vllm|tgi|mix|none: sets x-hopscope-backend (default mix; use none for other servers)
  --agent-ratio F       share of requests routed to the agent (x-hopscope-route: agent), 0..1 (default 0.1)
  --max-tokens N        max_tokens per request (default 64)
  --no-stream           non-streaming requests (no TTFT/ITL/TPOT)
Load profile (open loop: requests leave on schedule whatever the server does)
  --profile P           constant|ramp|step|spike (default constant)
  --rps N               target rate; the end rate for ramp, the cap for step, the base for spike (default 5)
  --duration D          run length, e.g. 30s, 2m (default 30s)
  --start-rps N         ramp/step start rate
  --step-rps N --step-every D    step increment and period
  --spike-rps N --spike-at D --spike-for D
  --arrivals A          uniform|poisson (default poisson)
  --seed N              prompt synthesiser and arrival seed (default 1)
Measurement
  --timeout D           per-request timeout (default 60s)
  --slo S               goodput SLOs, e.g. 'ttft_ms<=500,e2e_ms<=5000,tpot_ms<=50'
  --threshold T         repeatable, e.g. 'p99_ms<2000', 'error_rate<0.01'; exit 1 if any fails
  --connections N       HTTP connections (default 256)
  --max-in-flight N     client-side cap; arrivals beyond it are counted, not sent (default 10000)
  --traceparent         send a sampled W3C traceparent (otherwise the server's sampler decides)
  --run-id ID           baggage hopscope.run_id (default random)
  --json FILE           write the JSON summary there ('-' = stdout, the default)
  --quiet               no progress line
  --help                this text

Threshold metrics: ${Object.keys(THRESHOLD_METRICS).join(', ')}
Every request carries W3C baggage hopscope.run_id=<id>,hopscope.load_test=true.
Example: hopscope-load --profile spike --rps 20 --spike-rps 80 --spike-at 20s --spike-for 10s --duration 60s --threshold 'p99_ms<4000'`;

export class UsageError extends Error {}

/** "250ms", "30s", "2m", "1h" or a bare number of seconds → seconds. */
export function parseDuration(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$/.exec(v);
  if (!m) throw new UsageError(`--${name} ${JSON.stringify(v)}: expected a duration like 500ms, 30s, 2m`);
  const n = Number(m[1]);
  return n * ({ ms: 0.001, s: 1, m: 60, h: 3600 } as Record<string, number>)[m[2] ?? 's'];
}

function parseNum(name: string, v: string | undefined, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name} ${JSON.stringify(v)}: expected a number`);
  if (opts.int && !Number.isInteger(n)) throw new UsageError(`--${name} ${v}: expected an integer`);
  if (opts.min !== undefined && n < opts.min) throw new UsageError(`--${name} ${v}: must be ≥ ${opts.min}`);
  if (opts.max !== undefined && n > opts.max) throw new UsageError(`--${name} ${v}: must be ≤ ${opts.max}`);
  return n;
}

export interface CliPlan { load: Omit<LoadOptions, 'onProgress'>; thresholds: Threshold[]; jsonOut: string; quiet: boolean }

export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliPlan | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' }, target: { type: 'string' }, path: { type: 'string' }, method: { type: 'string' }, 'api-key': { type: 'string' },
        model: { type: 'string' }, backend: { type: 'string' }, 'agent-ratio': { type: 'string' }, 'max-tokens': { type: 'string' }, 'no-stream': { type: 'boolean' },
        profile: { type: 'string' }, rps: { type: 'string' }, duration: { type: 'string' }, 'start-rps': { type: 'string' }, 'step-rps': { type: 'string' },
        'step-every': { type: 'string' }, 'spike-rps': { type: 'string' }, 'spike-at': { type: 'string' }, 'spike-for': { type: 'string' }, arrivals: { type: 'string' },
        seed: { type: 'string' }, timeout: { type: 'string' }, slo: { type: 'string' }, threshold: { type: 'string', multiple: true }, connections: { type: 'string' },
        'max-in-flight': { type: 'string' }, traceparent: { type: 'boolean' }, 'run-id': { type: 'string' }, json: { type: 'string' }, quiet: { type: 'boolean' },
        'raw-body': { type: 'string' },
      },
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  const s = (k: string) => values[k] as string | undefined;
  let target: URL;
  try { target = new URL(s('target') ?? 'http://127.0.0.1:3310'); } catch { throw new UsageError(`--target ${JSON.stringify(s('target'))}: not a URL`); }
  if (!/^https?:$/.test(target.protocol)) throw new UsageError('--target must be an http:// or https:// URL');
  const method = (s('method') ?? 'POST').toUpperCase();
  if (method !== 'POST' && method !== 'GET') throw new UsageError('--method must be POST or GET');
  const backend = s('backend') ?? 'mix';
  if (!['vllm', 'tgi', 'mix', 'none'].includes(backend)) throw new UsageError('--backend must be vllm, tgi, mix or none');
  const profile: Profile = {
    kind: (s('profile') ?? 'constant') as ProfileKind,
    rps: parseNum('rps', s('rps') ?? '5')!,
    durationS: parseDuration('duration', s('duration') ?? '30s')!,
    startRps: parseNum('start-rps', s('start-rps')),
    stepRps: parseNum('step-rps', s('step-rps')),
    stepEveryS: parseDuration('step-every', s('step-every')),
    spikeRps: parseNum('spike-rps', s('spike-rps')),
    spikeAtS: parseDuration('spike-at', s('spike-at')),
    spikeForS: parseDuration('spike-for', s('spike-for')),
    arrivals: (s('arrivals') ?? 'poisson') as Profile['arrivals'],
  };
  try { validateProfile(profile); } catch (err) { throw new UsageError((err as Error).message); }
  if (expectedArrivals(profile) > 50_000_000) throw new UsageError(`this profile would send about ${expectedArrivals(profile)} requests; refusing (more than 50 million)`);
  const thresholds: Threshold[] = [];
  for (const t of (values.threshold as string[] | undefined) ?? []) {
    try { thresholds.push(parseThreshold(t)); } catch (err) { throw new UsageError((err as Error).message); }
  }
  let slo = {};
  try { slo = parseSlo(s('slo') ?? ''); } catch (err) { throw new UsageError((err as Error).message); }
  const timeoutS = parseDuration('timeout', s('timeout') ?? '60s')!;
  if (timeoutS <= 0 || timeoutS > 3600) throw new UsageError('--timeout must be > 0 and ≤ 1h');
  const models = (s('model') ?? 'hopscope-llama-8b-v1,hopscope-llama-8b-v2').split(',').map((x) => x.trim()).filter(Boolean);
  if (!models.length) throw new UsageError('--model needs at least one model name');
  return {
    load: {
      target: target.toString(), path: s('path') ?? '/v1/chat/completions', method: method as 'POST' | 'GET', profile,
      stream: !values['no-stream'], models, backend: backend as LoadOptions['backend'],
      agentRatio: parseNum('agent-ratio', s('agent-ratio') ?? '0.1', { min: 0, max: 1 })!,
      maxTokens: parseNum('max-tokens', s('max-tokens') ?? '64', { int: true, min: 1, max: 32768 })!,
      seed: parseNum('seed', s('seed') ?? '1', { int: true })!,
      runId: s('run-id') ?? `run-${randomBytes(4).toString('hex')}`,
      timeoutMs: Math.round(timeoutS * 1000),
      connections: parseNum('connections', s('connections') ?? '256', { int: true, min: 1, max: 10000 })!,
      maxInFlight: parseNum('max-in-flight', s('max-in-flight') ?? '10000', { int: true, min: 1, max: 1_000_000 })!,
      slo, traceparent: Boolean(values.traceparent), apiKey: s('api-key') ?? env.OPENAI_API_KEY, rawBody: s('raw-body'),
    },
    thresholds, jsonOut: s('json') ?? '-', quiet: Boolean(values.quiet),
  };
}

/** Every threshold metric, read from a summary. */
export function thresholdValue(sum: Summary, metric: keyof typeof THRESHOLD_METRICS): number {
  switch (metric) {
    case 'p50_ms': return sum.latencyMs.p50;
    case 'p90_ms': return sum.latencyMs.p90;
    case 'p95_ms': return sum.latencyMs.p95;
    case 'p99_ms': return sum.latencyMs.p99;
    case 'ttft_p50_ms': return sum.ttftMs.p50;
    case 'ttft_p99_ms': return sum.ttftMs.p99;
    case 'itl_p99_ms': return sum.itlMs.p99;
    case 'tpot_p50_ms': return sum.tpotMs.p50;
    case 'tpot_p99_ms': return sum.tpotMs.p99;
    case 'error_rate': return sum.sent ? sum.errors.total / sum.sent : 0;
    case 'timeout_rate': return sum.sent ? sum.timeouts / sum.sent : 0;
    case 'rps': return sum.rps.completed;
    case 'goodput_rps': return sum.goodput.rps;
    case 'goodput_ratio': return sum.goodput.ratio;
    case 'late_ratio': return sum.schedule.lateRatio;
  }
}

export function formatTable(sum: Summary): string {
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
  const rows: Array<[string, string]> = [
    ['run id', sum.runId],
    ['target', sum.target],
    ['profile', `${sum.profile.kind} ${sum.profile.rps} rps, ${sum.profile.durationS} s, ${sum.profile.arrivals}`],
    ['sent / ok / errors / timeouts', `${sum.sent} / ${sum.succeeded} / ${sum.errors.total} / ${sum.timeouts}`],
    ['rps target / sent / completed', `${sum.rps.targetMean} / ${sum.rps.sent} / ${sum.rps.completed}`],
    ['latency ms p50 / p90 / p99 / max', `${f(sum.latencyMs.p50)} / ${f(sum.latencyMs.p90)} / ${f(sum.latencyMs.p99)} / ${f(sum.latencyMs.max)}`],
    ['TTFT ms p50 / p99', `${f(sum.ttftMs.p50)} / ${f(sum.ttftMs.p99)}`],
    ['ITL ms p50 / p99', `${f(sum.itlMs.p50)} / ${f(sum.itlMs.p99)}`],
    ['TPOT ms p50 / p99', `${f(sum.tpotMs.p50)} / ${f(sum.tpotMs.p99)}`],
    ['output tokens/s', f(sum.outputTokensPerS)],
    ['goodput rps (ratio)', `${sum.goodput.rps} (${(sum.goodput.ratio * 100).toFixed(1)}%)`],
    ['sent > 10 ms late', `${sum.schedule.lateOver10ms} (${(sum.schedule.lateRatio * 100).toFixed(2)}%), late p99 ${f(sum.schedule.lateP99Ms)} ms`],
  ];
  for (const [k, v] of Object.entries(sum.errors.byKind)) rows.push([`errors: ${k}`, String(v)]);
  for (const [k, v] of Object.entries(sum.byModel)) rows.push([`  ${k}`, `n=${v.count} p50 ${f(v.p50Ms)} p99 ${f(v.p99Ms)} ttft p99 ${f(v.ttftP99Ms)}`]);
  const w = Math.max(...rows.map(([k]) => k.length));
  return [...rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`), ...sum.notes.map((n) => `note: ${n}`)].join('\n');
}

export async function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  let plan: CliPlan | 'help';
  try {
    plan = parseCli(argv);
  } catch (e) {
    err(`hopscope-load: ${(e as Error).message}\nRun hopscope-load --help for usage.\n`);
    return 2;
  }
  if (plan === 'help') { out(`${HELP}\n`); return 0; }
  const tty = Boolean(process.stderr.isTTY);
  const ac = new AbortController();
  const onSig = () => ac.abort();
  process.once('SIGINT', onSig);
  process.once('SIGTERM', onSig);
  const sum = await runLoad({
    ...plan.load,
    signal: ac.signal,
    onProgress: plan.quiet ? undefined : (p) => {
      const line = `[${p.elapsedS.toFixed(0).padStart(4)} s] sent ${p.sent} rps ${p.rps} p99 ${Number.isFinite(p.p99Ms) ? p.p99Ms.toFixed(0) : '-'} ms errors ${p.errors} timeouts ${p.timeouts} in-flight ${p.inFlight}`;
      err(tty ? `\r${line.padEnd(100)}` : `${line}\n`);
    },
  });
  process.off('SIGINT', onSig);
  process.off('SIGTERM', onSig);
  if (tty && !plan.quiet) err('\n');
  const results = plan.thresholds.map((t) => ({ threshold: t.text, actual: thresholdValue(sum, t.metric), pass: checkThreshold(t, thresholdValue(sum, t.metric)) }));
  out(`${formatTable(sum)}\n`);
  for (const r of results) out(`threshold ${r.threshold}: ${r.pass ? 'pass' : 'FAIL'} (actual ${Number.isFinite(r.actual) ? Number(r.actual.toFixed(4)) : 'n/a'})\n`);
  const json = JSON.stringify({ ...sum, thresholds: results }, null, 2);
  if (plan.jsonOut === '-') out(`${json}\n`);
  else writeFileSync(plan.jsonOut, json);
  return results.some((r) => !r.pass) ? 1 : 0;
}

if (process.argv[1]?.endsWith('loadgen/src/cli.ts')) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
