/**
 * The NCCL timeout pass: a request that failed because its tensor-parallel group's collective timed out is booked on
 * the group's hop with the group, the stalled rank and the collective named — from the spans (the chain's
 * `hopscope.nccl.*`, as loadgen/src/chain/hops/llm.ts records them) and from the exporter's slow-collective events
 * on the rank pods, the kernel's rank winning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KernelEvent, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { TRACE, sp } from './helpers';

const T0 = 1_700_000_000_000;
const WATCHDOG = 1500;

/** gateway → llm-vllm chat on group llm-vllm-0 (2 ranks); `stalled`: the collective timed out on that rank. */
function req(trace: string, o: { stalled?: number; ms?: number } = {}): Span[] {
  const llmMs = o.ms ?? 40;
  const group = { 'hopscope.llm.tp_group': 'llm-vllm-0', 'hopscope.llm.tp_size': 2 };
  const nccl: Span['attributes'] =
    o.stalled === undefined
      ? {}
      : {
          'hopscope.nccl.collective': 'ncclAllReduce',
          'hopscope.nccl.rank': o.stalled,
          'hopscope.nccl.rank_pod': o.stalled ? `llm-vllm-0-${o.stalled}` : 'llm-vllm-0',
          'hopscope.nccl.timeout_ms': WATCHDOG,
          'hopscope.nccl.ran_ms': WATCHDOG + 2,
          'hopscope.nccl.error': `[Rank ${o.stalled}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, Timeout(ms)=${WATCHDOG}) ran for ${WATCHDOG + 2} milliseconds before timing out.`,
        };
  const failed = o.stalled !== undefined;
  const spans = [
    sp('1', undefined, 'gateway', 'POST /v1/chat/completions', 'server', T0, T0 + llmMs + 4, {
      status: failed ? 'error' : 'unset',
    }),
    sp('2', '1', 'gateway', 'chat hopscope-llama-8b-v1', 'client', T0 + 1, T0 + llmMs + 3, {
      status: failed ? 'error' : 'unset',
      attributes: { 'peer.service': 'llm-vllm' },
    }),
    sp('3', '2', 'llm-vllm', 'chat hopscope-llama-8b-v1', 'server', T0 + 1.5, T0 + llmMs + 2.5, {
      status: failed ? 'error' : 'unset',
      ...(failed
        ? { statusMessage: 'EngineCore encountered an issue. See stack trace (above) for the root cause.' }
        : {}),
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'vllm', ...group, ...nccl },
    }),
  ];
  return spans.map((s) => ({ ...s, traceId: trace }));
}

const slow = (pod: string, endMs: number, durationMs: number, pid = 4321): KernelEvent => ({
  ts: endMs,
  type: 'nccl_slow_collective',
  pid,
  comm: 'llm-nccl-rank',
  pod,
  namespace: 'hopscope',
  node: 'gpu-node-0',
  durationMs,
  detail: { function: 'ncclAllReduce', result: 8, resultName: 'ncclTimeout', count: 8192, datatype: 'ncclBfloat16' },
  mode: 'replay',
});

const baseline = buildBaseline(Array.from({ length: 20 }, (_, i) => req(i.toString(16).padStart(32, '0'))));
const ncclOf = (a: RcaAnswer) => a.candidates[0].evidence.find((e) => e.kind === 'nccl_timeout');

test('spans and eBPF: the group, the stalled rank and the collective are named, the kernel evidence joined', () => {
  const spans = req(TRACE, { stalled: 1, ms: WATCHDOG + 10 });
  const end = T0 + WATCHDOG + 10;
  const a = rankTrace({ spans, baseline, kernelEvents: [slow('llm-vllm-0-1', end, WATCHDOG + 300)] });
  RcaAnswer.parse(a);
  const top = a.candidates[0];
  assert.deepEqual([top.service, top.pod], ['llm-vllm', 'llm-vllm-0'], JSON.stringify(a.candidates));
  const e = ncclOf(a)!;
  assert.ok(e, JSON.stringify(top.evidence));
  assert.equal(e.group, 'llm-vllm-0');
  assert.equal(e.rank, 1);
  assert.equal(e.rankPod, 'llm-vllm-0-1');
  assert.equal(e.collective, 'ncclAllReduce');
  assert.equal(e.source, 'spans+ebpf');
  assert.equal(e.kernelPid, 4321);
  assert.ok(
    top.evidence.some((x) => x.kind === 'kernel:nccl_slow_collective'),
    'the rank pod event joins the hop'
  );
  assert.match(
    a.verdict ?? '',
    /^llm-vllm-0: tensor-parallel group llm-vllm-0 \(2 ranks\): rank 1 \(pod llm-vllm-0-1\) stalled in ncclAllReduce/
  );
  assert.match(a.verdict ?? '', /until the NCCL watchdog timeout \(1\.5 s\)/);
  assert.match(a.verdict ?? '', /eBPF saw ncclAllReduce take 1\.8 s on llm-vllm-0-1 \(pid 4321, ncclTimeout\)/);
});

test('spans only: the rank from the span, and the missing kernel evidence said', () => {
  const a = rankTrace({ spans: req(TRACE, { stalled: 1, ms: WATCHDOG + 10 }), baseline, kernelEvents: [] });
  const e = ncclOf(a)!;
  assert.equal(e.rank, 1);
  assert.equal(e.source, 'spans');
  const b = rankTrace({
    spans: req(TRACE, { stalled: 1, ms: WATCHDOG + 10 }),
    baseline,
    kernelEvents: [slow('rag-0', T0 + 100, 900)],
  });
  assert.match(ncclOf(b)!.summary, /no slow collective from the exporter on the rank pods/);
});

test("the kernel's rank wins over the span's, and the disagreement is said", () => {
  const end = T0 + WATCHDOG + 10;
  const a = rankTrace({
    spans: req(TRACE, { stalled: 1, ms: WATCHDOG + 10 }),
    baseline,
    kernelEvents: [slow('llm-vllm-0', end, WATCHDOG + 100, 77), slow('llm-vllm-0-1', end, 200, 78)],
  });
  const e = ncclOf(a)!;
  assert.equal(e.rank, 0);
  assert.equal(e.rankPod, 'llm-vllm-0');
  assert.equal(e.slowCollectives, 2);
  assert.match(e.summary, /the span named rank 1, the kernel rank 0/);
});

test('a healthy group gives no NCCL evidence; slow collectives outside the span window are not joined', () => {
  const spans = req(TRACE, { ms: 400 });
  const a = rankTrace({ spans, baseline, kernelEvents: [slow('llm-vllm-0-1', T0 + 60_000, 300)] });
  assert.ok(a.candidates.every((c) => c.evidence.every((e) => e.kind !== 'nccl_timeout')));
  // Slow but not timed out: the kernel alone names the rank.
  const b = rankTrace({ spans, baseline, kernelEvents: [slow('llm-vllm-0-1', T0 + 300, 250)] });
  const e = b.candidates.flatMap((c) => c.evidence).find((x) => x.kind === 'nccl_timeout')!;
  assert.ok(e);
  assert.equal(e.timedOut, false);
  assert.equal(e.source, 'ebpf');
  assert.match(e.summary, /rank 1 \(pod llm-vllm-0-1\) was slow in ncclAllReduce/);
});

test('a window of failed requests: the group ranks first, its evidence counted over the traces', () => {
  const traces = [0, 1, 2].map((i) => req(`${i + 1}`.padStart(32, 'f'), { stalled: 1, ms: WATCHDOG + 10 }));
  const w = rankWindow({ traces, baseline });
  const top = w.candidates[0];
  assert.deepEqual([top.service, top.pod], ['llm-vllm', 'llm-vllm-0']);
  assert.ok(
    top.evidence.some((e) => e.kind === 'nccl_timeout'),
    JSON.stringify(top.evidence.map((e) => e.kind))
  );
});
