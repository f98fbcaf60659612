/**
 * The GPU memory leak pass on hand-built traces with the bpf-exporter's `gpu_memory_held` records (their detail as
 * bpf-exporter/src/probes/gpu-memory-held.ts parses bpftrace's lines): the leaking pod is named from the latest record
 * before the span, with its growth, and nothing is said below the threshold, for another pod, too long before, or
 * once held memory fell back.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KernelEvent, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { sp } from './helpers';

const GiB = 2 ** 30;

/** gateway → llm-vllm (pod llm-vllm-1), the LLM server span `llmMs` long, starting at `at`. */
function req(at: number, llmMs: number, o: { fallback?: boolean; trace?: string } = {}): Span[] {
  const pod = (service: string, p = `${service}-0`) => ({ resource: { 'service.name': service, 'k8s.pod.name': p } });
  const llmAttrs: Span['attributes'] = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm8b' };
  if (o.fallback)
    Object.assign(llmAttrs, {
      'gen_ai.response.model': 'm1b',
      'hopscope.gpu.oom': true,
      'hopscope.fallback.reason': 'gpu_oom',
      'hopscope.fallback.from_model': 'm8b',
      'hopscope.fallback.model': 'm1b',
    });
  const spans = [
    sp('1', undefined, 'gateway', 'POST /v1/chat/completions', 'server', at, at + llmMs + 4, pod('gateway')),
    sp('2', '1', 'gateway', 'chat m8b', 'client', at + 1, at + llmMs + 3, {
      attributes: { 'peer.service': 'llm-vllm' },
      ...pod('gateway'),
    }),
    sp('3', '2', 'llm-vllm', 'chat m8b', 'server', at + 1.5, at + llmMs + 2.5, {
      attributes: llmAttrs,
      ...pod('llm-vllm', 'llm-vllm-1'),
    }),
  ];
  return o.trace ? spans.map((s) => ({ ...s, traceId: o.trace! })) : spans;
}
const baseline = buildBaseline(Array.from({ length: 30 }, (_, i) => req(i * 1000, 40 + (i % 5))));

const held = (
  pod: string,
  ts: number,
  d: { grew: number; held?: number; overMs?: number; allocs?: number; frees?: number }
): KernelEvent => ({
  ts,
  type: 'gpu_memory_held',
  pid: 4242,
  comm: 'llm-cuda-driver',
  pod,
  namespace: 'hopscope-demo',
  node: 'gpu-node-0',
  detail: {
    function: 'cuMemAlloc_v2',
    op: 'alloc',
    bytes: 16 * 2 ** 20,
    heldBytes: d.held ?? d.grew,
    grewBytes: d.grew,
    overMs: d.overMs ?? 90_000,
    allocs: d.allocs ?? 400,
    frees: d.frees ?? 0,
  },
  mode: 'replay',
  notable: true,
});

test('a growing GPU memory record on the LLM pod names the leak, its growth and its pod, before any OOM', () => {
  const spans = req(100_000, 400); // queued: 10× its usual, no failure yet
  const events = [held('llm-vllm-1', 95_000, { grew: 6.1 * GiB, overMs: 90_000 })];
  const a = RcaAnswer.parse(rankTrace({ spans, baseline, kernelEvents: events }));
  const top = a.candidates[0];
  assert.equal(top.pod, 'llm-vllm-1');
  const leak = top.evidence.find((e) => e.kind === 'gpu_memory_leak');
  assert.ok(leak, JSON.stringify(top.evidence));
  assert.match(leak.summary, /^GPU memory held by llm-vllm-1 grew 6\.1 GiB in 90 s, no frees \(6\.1 GiB held\)/);
  assert.deepEqual([leak.grewBytes, leak.pid, leak.frees], [6.1 * GiB, 4242, 0]);
  assert.match(a.verdict ?? '', /^GPU memory held by llm-vllm-1 grew 6\.1 GiB in 90 s/);
  const without = rankTrace({ spans, baseline });
  assert.ok(top.score > without.candidates[0].score, `${top.score} vs ${without.candidates[0].score}`);
  // Frees meanwhile (healthy serving in the same process) are said.
  const busy = rankTrace({ spans, baseline, kernelEvents: [held('llm-vllm-1', 95_000, { grew: 2 * GiB, frees: 37 })] });
  assert.match(
    busy.candidates[0].evidence.find((e) => e.kind === 'gpu_memory_leak')!.summary,
    /400 allocations and 37 frees meanwhile/
  );
});

test('the leak explains the out-of-memory fallback it led to', () => {
  const spans = req(200_000, 60, { fallback: true });
  const a = rankTrace({
    spans,
    baseline,
    kernelEvents: [held('llm-vllm-1', 199_000, { grew: 4 * GiB, overMs: 64_000 })],
  });
  assert.equal(a.candidates[0].pod, 'llm-vllm-1');
  const kinds = a.candidates[0].evidence.map((e) => e.kind);
  assert.ok(kinds.includes('gpu_memory_leak') && kinds.includes('model_fallback'), kinds.join());
  assert.match(a.verdict ?? '', /^GPU memory held by llm-vllm-1 grew 4\.0 GiB in 64 s/);
});

test('nothing said below the threshold, on another pod, too long before, after it fell back, or without records', () => {
  const spans = req(100_000, 400);
  const leakOf = (events: KernelEvent[], config = {}) =>
    rankTrace({ spans, baseline, kernelEvents: events, config })
      .candidates.flatMap((c) => c.evidence)
      .filter((e) => e.kind === 'gpu_memory_leak');
  assert.equal(leakOf([held('llm-vllm-1', 95_000, { grew: 0.5 * GiB })]).length, 0, 'below 1 GiB');
  assert.equal(leakOf([held('llm-vllm-1', 95_000, { grew: 0.5 * GiB })], { gpuLeakMinBytes: 256 * 2 ** 20 }).length, 1);
  assert.equal(leakOf([held('llm-vllm-0', 95_000, { grew: 6 * GiB })]).length, 0, 'another pod');
  assert.equal(leakOf([held('llm-vllm-1', 30_000, { grew: 6 * GiB })]).length, 0, 'older than the 60 s lookback');
  assert.equal(leakOf([held('llm-vllm-1', 95_000, { grew: 6 * GiB, allocs: 1 })]).length, 0, 'one allocation');
  // It grew, then fell back (the fault ended, the replica freed it): the latest record says so.
  const fell = held('llm-vllm-1', 99_000, { grew: 0, held: 0, overMs: 0 });
  assert.equal(leakOf([held('llm-vllm-1', 95_000, { grew: 6 * GiB }), fell]).length, 0, 'fell back');
  assert.equal(leakOf([]).length, 0);
});

test('in a window the leaking pod carries the evidence across its traces', () => {
  const traces = Array.from({ length: 6 }, (_, i) =>
    req(100_000 + i * 2000, 400, { trace: `${i + 1}`.padStart(32, 'b') })
  );
  const events = [95_000, 100_000, 105_000].map((ts, i) => held('llm-vllm-1', ts, { grew: (4 + i) * GiB }));
  const w = rankWindow({ traces, baseline, kernelEvents: events });
  assert.equal(w.candidates[0].pod, 'llm-vllm-1');
  assert.ok(
    w.candidates[0].evidence.some((e) => e.kind === 'gpu_memory_leak'),
    JSON.stringify(w.candidates[0].evidence)
  );
});
