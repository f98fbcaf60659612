/**
 * Per-trace root cause speed: a synthetic chain trace of 500 / 5,000 / 50,000 spans with 10,000 kernel events
 * (target: ≤ 5 ms median at 5,000 spans), timed by the engine's own `tookMs`; raw kernel events (indexed per call) vs
 * an index built once (what the proxy does when ranking many traces against one event set); and, with
 * HOPSCOPE_BENCH_BASELINE_DIR=<a checkout of an earlier commit> (e.g. `git worktree add /tmp/rca-before <commit>` with
 * node_modules linked in), this engine against that one, alternating in one process.
 * As deployed: each engine is its own esbuild bundle (the Dockerfile's flags), not the sources under tsx, whose
 * per-import getters cost a small engine of many modules more than production pays (HOPSCOPE_BENCH_RCA=source loads
 * the sources under tsx instead, to compare).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { abCompare, abRow, median, report, smoke } from './lib/ab';
import { syntheticHealthy, syntheticTrace } from '../tests/support/rca/synthetic';
import type * as Engine from '../backend-proxy/src/rca';

type EngineApi = Pick<typeof Engine, 'buildBaseline' | 'rankTrace' | 'indexKernelEvents'>;

const KERNEL_EVENTS = 10_000;
const TARGET_MS = 5;
const root = join(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'hopscope-rca-bench-'));
process.once('exit', () => rmSync(out, { recursive: true, force: true }));

/** The engine of checkout `dir` as one ES module bundle, loaded in this process. */
async function loadEngine(dir: string, name: string): Promise<EngineApi> {
  if (process.env.HOPSCOPE_BENCH_RCA === 'source')
    return (await import(pathToFileURL(join(dir, 'backend-proxy/src/rca/index.ts')).href)) as EngineApi;
  const outfile = join(out, `${name}.mjs`);
  await build({
    entryPoints: [join(dir, 'backend-proxy/src/rca/index.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile,
    logLevel: 'warning',
  });
  return (await import(pathToFileURL(outfile).href)) as EngineApi;
}

function makeTrace(targetSpans: number) {
  // ~20 spans for the chain + 4 per agent step (an LLM call and a tool call, client + server each).
  const steps = Math.max(1, Math.round((targetSpans - 20) / 4));
  return syntheticTrace({
    seed: 11,
    agentSteps: steps,
    deadlinesMs: {},
    kernelNoise: KERNEL_EVENTS,
    fault: { hop: 'tool', kind: 'latency' },
  });
}

const engine = await loadEngine(root, 'current');
const healthy = syntheticHealthy(3, 100);
const baseline = engine.buildBaseline(healthy);

const rows: Array<Record<string, string | number>> = [];
const json: Record<string, unknown> = {};
for (const size of smoke([500, 5_000, 50_000], [500, 5_000])) {
  const tr = makeTrace(size);
  const runs = smoke(size >= 50_000 ? 7 : 21, 1);
  for (let w = 0; w < 5; w++) engine.rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents }); // warm-up (JIT)
  const took: number[] = [];
  const cpu: number[] = [];
  let top = '';
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const a = engine.rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
    const c1 = process.cpuUsage(c0);
    cpu.push((c1.user + c1.system) / 1000);
    took.push(a.tookMs);
    top = `${a.candidates[0]?.service} (${a.candidates[0]?.score})`;
  }
  const s = [...took].sort((x, y) => x - y);
  const row = {
    spans: tr.spans.length,
    kernelEvents: tr.kernelEvents.length,
    runs,
    'median ms': median(took),
    'min ms': s[0],
    'max ms': s[s.length - 1],
    'per 1k spans ms': median(took) / (tr.spans.length / 1000),
    'median CPU ms': median(cpu),
    top,
  };
  rows.push(row);
  json[String(size)] = row;
}
report(
  'rankTrace: scaling (tookMs, measured inside the engine; CPU ms = process CPU time incl. GC threads, less sensitive to other load)',
  rows,
  json
);
console.log(
  `load average during the run: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${cpus().length} cores`
);
const at5k = rows[1]['median ms'] as number;
console.log(
  `5,000 spans + ${KERNEL_EVENTS} kernel events: median ${at5k.toFixed(2)} ms — target ≤ ${TARGET_MS} ms: ${at5k <= TARGET_MS ? 'MET' : 'MISSED'}`
);

const tr = makeTrace(5_000);
/** One round: the median tookMs of 11 calls (one call is ~5 ms: a single one is at the mercy of the scheduler). */
const round = (e: EngineApi, b: unknown, kernelEvents: unknown): number =>
  median(
    Array.from(
      { length: 11 },
      () => e.rankTrace({ spans: tr.spans, baseline: b as never, kernelEvents: kernelEvents as never }).tookMs
    )
  );

const index = engine.indexKernelEvents(tr.kernelEvents);
const ab = await abCompare({
  name: 'rankTrace 5k spans, 10k kernel events',
  unit: 'ms',
  rounds: 7,
  a: { label: 'raw events', run: async () => round(engine, baseline, tr.kernelEvents) },
  b: { label: 'pre-built index', run: async () => round(engine, baseline, index) },
});
report('A/B: kernel events raw vs pre-indexed', [abRow(ab)], ab);

const before = process.env.HOPSCOPE_BENCH_BASELINE_DIR;
if (!before) {
  console.log(
    '\nA/B against an earlier engine: skipped (set HOPSCOPE_BENCH_BASELINE_DIR to a checkout of the earlier commit)'
  );
} else if (!existsSync(join(before, 'backend-proxy/src/rca/index.ts')) || !existsSync(join(before, 'node_modules'))) {
  console.log(
    `\nA/B against an earlier engine: skipped (${before} has no backend-proxy/src/rca/index.ts or no node_modules)`
  );
} else {
  const old = await loadEngine(before, 'before');
  // This checkout's engine loaded afresh too: the one above ran the 50k-span scaling and carries its heap and JIT
  // state, which would tilt the comparison against it.
  const engine = await loadEngine(root, 'after');
  // Each engine computes its own baseline from the same healthy traces (the format may have changed between them).
  const baseline = engine.buildBaseline(healthy);
  const oldBaseline = old.buildBaseline(healthy);
  for (let w = 0; w < 5; w++) {
    round(old, oldBaseline, tr.kernelEvents);
    round(engine, baseline, tr.kernelEvents);
  }
  const vs = await abCompare({
    name: `rankTrace 5k spans, 10k kernel events: ${before} → this checkout`,
    unit: 'ms',
    rounds: 9,
    a: { label: 'before', run: async () => round(old, oldBaseline, tr.kernelEvents) },
    b: { label: 'after', run: async () => round(engine, baseline, tr.kernelEvents) },
  });
  report('A/B: engine before vs after (ratio after/before: < 1 is faster)', [abRow(vs)], vs);

  // CPU time per call (process user + system, over 11 calls): on this shared machine wall time swings with the other
  // processes' load; CPU time moves much less. Then the same on a trace whose LLM server spans carry vLLM's
  // `gen_ai.latency.*` (what the LLM phases pass reads: the cost of the pass doing its work, not only looking).
  const cpuRound = (e: EngineApi, b: unknown, spans: unknown): number => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 11; i++)
      e.rankTrace({ spans: spans as never, baseline: b as never, kernelEvents: tr.kernelEvents });
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / 11;
  };
  const vsCpu = await abCompare({
    name: 'rankTrace 5k spans, 10k kernel events, CPU ms per call',
    unit: 'ms',
    rounds: 15,
    a: { label: 'before', run: async () => cpuRound(old, oldBaseline, tr.spans) },
    b: { label: 'after', run: async () => cpuRound(engine, baseline, tr.spans) },
  });
  const vllmShaped = withEngineSpans(tr.spans);
  const healthyV = healthy.map(withEngineSpans);
  const oldBaselineV = old.buildBaseline(healthyV);
  const baselineV = engine.buildBaseline(healthyV);
  const vsCpuV = await abCompare({
    name: 'the same, LLM spans vLLM-shaped (gen_ai.latency.*)',
    unit: 'ms',
    rounds: 15,
    a: { label: 'before', run: async () => cpuRound(old, oldBaselineV, vllmShaped) },
    b: { label: 'after', run: async () => cpuRound(engine, baselineV, vllmShaped) },
  });
  report('A/B: engine before vs after, CPU time (ratio after/before: < 1 is faster)', [abRow(vsCpu), abRow(vsCpuV)], {
    plain: vsCpu,
    vllmShaped: vsCpuV,
  });
}

/** The trace with each LLM server span carrying vLLM's phase attributes (5% queue, 15% prefill, 80% decode, s). */
function withEngineSpans<
  T extends {
    service: string;
    kind: string;
    startMs: number;
    endMs: number;
    attributes: Record<string, string | number | boolean>;
  },
>(spans: T[]): T[] {
  return spans.map((s) => {
    if (s.kind !== 'server' || !s.service.startsWith('llm-')) return s;
    const d = (s.endMs - s.startMs) / 1000;
    return {
      ...s,
      attributes: {
        ...s.attributes,
        'gen_ai.latency.time_in_queue': d * 0.05,
        'gen_ai.latency.time_in_model_prefill': d * 0.15,
        'gen_ai.latency.time_in_model_decode': d * 0.8,
        'gen_ai.usage.prompt_tokens': 600,
        'gen_ai.usage.completion_tokens': 100,
      },
    };
  });
}
