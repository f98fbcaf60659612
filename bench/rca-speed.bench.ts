/**
 * Per-trace root cause speed: a synthetic chain trace of 500 / 5,000 / 50,000 spans with 10,000 kernel events
 * (target: ≤ 50 ms median at 5,000 spans), timed by the engine's own `tookMs`; and, side by side, raw kernel events
 * (indexed per call) vs an index built once (what the proxy does when ranking many traces against one event set).
 */
import { abCompare, abRow, median, report } from './lib/ab';
import { buildBaseline, indexKernelEvents, rankTrace } from '../backend-proxy/src/rca';
import { syntheticHealthy, syntheticTrace } from '../backend-proxy/src/rca/synthetic';

const KERNEL_EVENTS = 10_000;
const baseline = buildBaseline(syntheticHealthy(3, 100));

function makeTrace(targetSpans: number) {
  // ~20 spans for the chain + 4 per agent step (an LLM call and a tool call, client + server each).
  const steps = Math.max(1, Math.round((targetSpans - 20) / 4));
  return syntheticTrace({ seed: 11, agentSteps: steps, deadlinesMs: {}, kernelNoise: KERNEL_EVENTS, fault: { hop: 'tool', kind: 'latency' } });
}

const rows: Array<Record<string, string | number>> = [];
const json: Record<string, unknown> = {};
for (const size of [500, 5_000, 50_000]) {
  const tr = makeTrace(size);
  const runs = size >= 50_000 ? 7 : 21;
  for (let w = 0; w < 5; w++) rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents }); // warm-up (JIT)
  const took: number[] = [];
  const cpu: number[] = [];
  let top = '';
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const a = rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents });
    const c1 = process.cpuUsage(c0);
    cpu.push((c1.user + c1.system) / 1000);
    took.push(a.tookMs);
    top = `${a.candidates[0]?.service} (${a.candidates[0]?.score})`;
  }
  const s = [...took].sort((x, y) => x - y);
  const row = { spans: tr.spans.length, kernelEvents: tr.kernelEvents.length, runs, 'median ms': median(took), 'min ms': s[0], 'max ms': s[s.length - 1], 'per 1k spans ms': median(took) / (tr.spans.length / 1000), 'median CPU ms': median(cpu), top };
  rows.push(row);
  json[String(size)] = row;
}
report('rankTrace: scaling (tookMs, measured inside the engine; CPU ms = process CPU time incl. GC threads, less sensitive to other load)', rows, json);
console.log(`load average during the run: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
const at5k = rows[1]['median ms'] as number;
console.log(`5,000 spans + ${KERNEL_EVENTS} kernel events: median ${at5k.toFixed(2)} ms — target ≤ 50 ms: ${at5k <= 50 ? 'MET' : 'MISSED'}`);

const tr = makeTrace(5_000);
const index = indexKernelEvents(tr.kernelEvents);
const ab = await abCompare({
  name: 'rankTrace 5k spans, 10k kernel events',
  unit: 'ms',
  rounds: 7,
  a: { label: 'raw events', run: async () => median(Array.from({ length: 5 }, () => rankTrace({ spans: tr.spans, baseline, kernelEvents: tr.kernelEvents }).tookMs)) },
  b: { label: 'pre-built index', run: async () => median(Array.from({ length: 5 }, () => rankTrace({ spans: tr.spans, baseline, kernelEvents: index }).tookMs)) },
});
report('A/B: kernel events raw vs pre-indexed', [abRow(ab)], ab);
