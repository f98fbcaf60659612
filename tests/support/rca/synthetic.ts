/**
 * A seeded synthetic trace of our chain (driver → gateway → embedding, vector-cache, rag, agent → llm-{vllm,tgi},
 * tool), with the kernel events a node would record and one injectable fault per hop and kind. Shaped like the
 * simulated chain (service.name, k8s.pod.name, k8s.node.name, gen_ai.* attributes), so tests and benchmarks can ask
 * "does the faulted hop rank first" without running anything.
 */
import { createHash } from 'node:crypto';
import type { FaultKind, FaultTarget, KernelEvent, Span } from '../../../contract';
import { seededRandom } from '../../../loadgen/src/shared/random';

/** mulberry32 (the chain's seeded randomness): identical on every platform, so a case reproduces. */
export const rng = seededRandom;

export const CHAIN_HOPS: FaultTarget[] = [
  'gateway',
  'embedding',
  'vector-cache',
  'rag',
  'llm-vllm',
  'llm-tgi',
  'agent',
  'tool',
];
export const FAULT_KINDS: FaultKind[] = [
  'latency',
  'error',
  'timeout',
  'cpu_hog',
  'tls_slow_handshake',
  'gpu_oom',
  'kv_cache_thrash',
  'tcp_retransmit',
];
/** The chain's call edges, for the "hop with no span" check (`expectedEdges` in the config). */
export const CHAIN_EDGES: Array<[string, string]> = [
  ['loadgen', 'gateway'],
  ['gateway', 'embedding'],
  ['gateway', 'vector-cache'],
  ['gateway', 'rag'],
  ['gateway', 'agent'],
  ['agent', 'llm-vllm'],
  ['agent', 'llm-tgi'],
  ['agent', 'tool'],
];

export interface SyntheticFault {
  hop: FaultTarget;
  kind: FaultKind;
  /** ms (latency, timeout hang, kv re-prefill, network delay) or factor (cpu_hog); defaults per kind. */
  magnitude?: number;
}

export interface SyntheticOptions {
  seed: number;
  startMs?: number;
  fault?: SyntheticFault;
  /** Agent iterations (LLM call + tool call each): 1 → ~20 spans, 1250 → ~5,000 spans. */
  agentSteps?: number;
  backend?: 'vllm' | 'tgi';
  /** Routine kernel events (fast TLS handshakes, connects) spread over the trace's pods and window. */
  kernelNoise?: number;
  /** Stray TCP retransmits on random healthy pods (kernel noise that is not the cause). */
  strayRetransmits?: number;
  /** Per-node clock offsets (ms) for spans and kernel events recorded on that node. */
  clockSkewMs?: Record<string, number>;
  /** Client deadlines per calling hop (ms); default gateway 8 s, agent 3 s. `{}` disables them (long benchmark traces). */
  deadlinesMs?: Record<string, number>;
  /**
   * Span starts truncated to whole milliseconds (default true), as the chain's SDK records them (Date.now()-based
   * starts, precise ends): consecutive sibling calls then overlap by a fraction of a millisecond.
   */
  coarseStarts?: boolean;
  /** Drop these hops' spans, as if they lost the traceparent or are not instrumented. */
  uninstrumented?: string[];
}

export interface SyntheticTrace {
  traceId: string;
  spans: Span[];
  kernelEvents: KernelEvent[];
  truth?: { service: string; pod: string; kind: FaultKind };
}

const podName = (hop: string, i: number): string =>
  `${hop}-${createHash('sha1').update(hop).digest('hex').slice(0, 5)}-${i}`;
const REPLICAS: Record<string, number> = {
  loadgen: 1,
  gateway: 1,
  embedding: 1,
  'vector-cache': 1,
  rag: 2,
  'llm-vllm': 2,
  'llm-tgi': 2,
  agent: 1,
  tool: 1,
};
const nodeOf = (hop: string, i: number): string => (hop.startsWith('llm-') ? `gpu-node-${i % 2}` : 'cpu-node-0');
const pidOf = (pod: string): number =>
  1000 + (parseInt(createHash('sha1').update(pod).digest('hex').slice(0, 4), 16) % 30000);
const hex = (r: () => number, bytes: number): string => {
  let s = '';
  for (let i = 0; i < bytes; i++)
    s += Math.floor(r() * 256)
      .toString(16)
      .padStart(2, '0');
  return s === '0'.repeat(bytes * 2) ? `${s.slice(0, -1)}1` : s;
};

const DEFAULT_MAGNITUDE: Record<FaultKind, number> = {
  latency: 300,
  error: 0,
  timeout: 15000,
  cpu_hog: 3,
  tls_slow_handshake: 400,
  gpu_oom: 0,
  kv_cache_thrash: 150,
  tcp_retransmit: 200,
  nccl_timeout: 0,
  gpu_memory_leak: 0,
};
/** Per-caller client deadlines: inner calls give up sooner than outer ones, as a real chain configures them. */
const DEADLINE_MS: Record<string, number> = { gateway: 8000, agent: 3000 };

export const DEFAULT_CLOCK_SKEW: Record<string, number> = { 'cpu-node-0': 0, 'gpu-node-0': 3, 'gpu-node-1': -2 };

export function syntheticTrace(o: SyntheticOptions): SyntheticTrace {
  const r = rng(o.seed);
  const norm = (mean: number, sd: number): number => {
    const u = Math.max(r(), 1e-12);
    const v = r();
    return Math.max(mean * 0.2, mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  };
  const traceId = hex(r, 16);
  const t0 = o.startMs ?? 1_767_225_600_000 + Math.floor(r() * 3_600_000);
  const fault = o.fault;
  const mag = fault ? (fault.magnitude ?? DEFAULT_MAGNITUDE[fault.kind]) : 0;
  const backend =
    fault?.hop === 'llm-vllm' ? 'vllm' : fault?.hop === 'llm-tgi' ? 'tgi' : (o.backend ?? (r() < 0.5 ? 'vllm' : 'tgi'));
  const skew = o.clockSkewMs ?? DEFAULT_CLOCK_SKEW;
  const dropped = new Set(o.uninstrumented ?? []);
  const spans: Span[] = [];
  const kernel: KernelEvent[] = [];
  const podsUsed = new Set<string>();

  /** The replica serving this call: the faulted hop always lands on its faulted replica 0. */
  const replica = (hop: string): number => (fault?.hop === hop ? 0 : Math.floor(r() * REPLICAS[hop]));
  const isFaulted = (hop: string, idx: number): boolean => fault !== undefined && fault.hop === hop && idx === 0;

  interface Ctx {
    hop: string;
    idx: number;
    spanId?: string;
  }
  const mk = (
    ctx: Ctx,
    parentId: string | undefined,
    name: string,
    kind: Span['kind'],
    start: number,
    end: number,
    attrs: Span['attributes'] = {}
  ): Span => {
    const pod = podName(ctx.hop, ctx.idx);
    const node = nodeOf(ctx.hop, ctx.idx);
    podsUsed.add(pod);
    const off = skew[node] ?? 0;
    const s: Span = {
      traceId,
      spanId: hex(r, 8),
      name,
      service: ctx.hop,
      kind,
      startMs: start + off,
      endMs: end + off,
      status: 'unset',
      attributes: attrs,
      resource: {
        'service.name': ctx.hop,
        'k8s.pod.name': pod,
        'k8s.node.name': node,
        'k8s.namespace.name': 'hopscope',
        'process.pid': pidOf(pod),
      },
    };
    if (parentId !== undefined) s.parentSpanId = parentId;
    if (!dropped.has(ctx.hop)) spans.push(s);
    return s;
  };
  const kev = (
    hop: string,
    idx: number,
    type: KernelEvent['type'],
    ts: number,
    durationMs: number | undefined,
    detail: Record<string, unknown>
  ): void => {
    const pod = podName(hop, idx);
    const e: KernelEvent = {
      ts: ts + (skew[nodeOf(hop, idx)] ?? 0),
      type,
      pid: pidOf(pod),
      comm: hop.replace(/-/g, '_').slice(0, 15),
      pod,
      namespace: 'hopscope',
      node: nodeOf(hop, idx),
      detail,
      mode: 'replay',
    };
    if (durationMs !== undefined) e.durationMs = durationMs;
    kernel.push(e);
  };
  const fail = (s: Span, status: Span['status'], message: string): void => {
    s.status = status;
    s.statusMessage = message;
  };

  /** A server body: runs from `start`, returns its end and whether it failed. */
  type Body = (ctx: Ctx, span: Span, start: number) => { end: number; failed?: string };

  /**
   * caller → callee: a client span on the caller, network both ways, the callee's server span. Returns the client
   * span's end and failure (propagated upward as an error, as a real chain would).
   */
  const call = (
    caller: Ctx,
    callerSpanId: string | undefined,
    callee: string,
    clientName: string,
    serverName: string,
    start: number,
    body: Body,
    serverAttrs: Span['attributes'] = {}
  ): { end: number; failed?: string } => {
    const idx = replica(callee);
    const faulted = isFaulted(callee, idx);
    const client = mk(caller, callerSpanId, clientName, 'client', start, start, {
      'peer.service': callee,
      'server.address': podName(callee, idx),
    });
    let inbound = norm(0.6, 0.1);
    if (faulted && fault!.kind === 'tls_slow_handshake') {
      inbound += mag;
      kev(callee, idx, 'tls_handshake', start + inbound - 0.2, mag, { side: 'server', sni: callee });
    }
    if (faulted && fault!.kind === 'tcp_retransmit') {
      const n = 2 + Math.floor(r() * 2);
      inbound += mag * (n - 1);
      for (let k = 0; k < n; k++)
        kev(callee, idx, 'tcp_retransmit', start + (k + 1) * mag * 0.9, undefined, {
          saddr: podName(callee, idx),
          state: 'ESTABLISHED',
        });
    }
    const sStart = start + inbound;
    const ctx: Ctx = { hop: callee, idx };
    const server = mk(ctx, client.spanId, serverName, 'server', sStart, sStart, serverAttrs);
    const res = body(ctx, server, sStart);
    server.endMs = res.end + (skew[nodeOf(callee, idx)] ?? 0);
    if (res.failed) fail(server, 'error', res.failed);
    let cEnd = res.end + norm(0.4, 0.08);
    let failed = res.failed ? `upstream ${callee} failed: ${res.failed}` : undefined;
    const deadline = (o.deadlinesMs ?? DEADLINE_MS)[caller.hop];
    if (deadline !== undefined && cEnd - start > deadline) {
      cEnd = start + deadline;
      fail(client, 'timeout', `deadline exceeded after ${deadline} ms`);
      failed = `504 upstream ${callee} timed out`;
      // A hung callee often never reports its span before the trace is read.
      if (r() < 0.5) spans.splice(spans.indexOf(server), 1);
    } else if (failed) fail(client, 'error', failed);
    client.endMs = cEnd + (skew[nodeOf(caller.hop, caller.idx)] ?? 0);
    return { end: cEnd, failed };
  };

  /** Own work of a hop, with the fault's effect when this replica is the faulted one. */
  const work = (ctx: Ctx, ms: number): number => {
    if (!isFaulted(ctx.hop, ctx.idx)) return ms;
    switch (fault!.kind) {
      case 'latency':
        return ms + mag;
      case 'cpu_hog':
        return ms * mag + 80;
      case 'kv_cache_thrash':
        return ms + mag;
      case 'timeout':
        return ms + mag;
      case 'error':
        return ms * 0.5;
      case 'gpu_oom':
        return ctx.hop.startsWith('llm-') ? ms * 1.2 : ms * 0.5; // fallback model regenerates
      default:
        return ms;
    }
  };
  const faultFailure = (ctx: Ctx, at: number): string | undefined => {
    if (!isFaulted(ctx.hop, ctx.idx)) return undefined;
    if (fault!.kind === 'error') return '500 injected error';
    if (fault!.kind === 'gpu_oom') {
      kev(ctx.hop, ctx.idx, 'gpu_alloc_fail', at, undefined, { bytes: 2147483648, gpu: ctx.idx });
      // LLM hops answer with their fallback model (as the chain does); others fail.
      if (ctx.hop.startsWith('llm-')) return undefined;
      return 'CUDA out of memory. Tried to allocate 2.00 GiB';
    }
    return undefined;
  };

  const leaf =
    (ms: number, extra?: (ctx: Ctx, span: Span) => void): Body =>
    (ctx, span, start) => {
      extra?.(ctx, span);
      const end = start + work(ctx, norm(ms, ms * 0.12));
      const failed = faultFailure(ctx, start + (end - start) / 2);
      return { end, failed };
    };

  const llmBody: Body = (ctx, span, start) => {
    const input = 200 + Math.floor(r() * 600);
    const output = 40 + Math.floor(r() * 80);
    const thrash = isFaulted(ctx.hop, ctx.idx) && fault!.kind === 'kv_cache_thrash';
    const hit = thrash ? 0.15 + r() * 0.2 : 0.85 + r() * 0.1;
    Object.assign(span.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': backend,
      'gen_ai.request.model': 'llama-3-8b',
      'gen_ai.usage.input_tokens': input,
      'gen_ai.usage.output_tokens': output,
      'gen_ai.usage.cache_read.input_tokens': Math.round(input * hit),
      'hopscope.kv_cache.hit_rate': Math.round(hit * 1000) / 1000,
    });
    if (isFaulted(ctx.hop, ctx.idx) && fault!.kind === 'gpu_oom') {
      Object.assign(span.attributes, {
        'hopscope.gpu.oom': true,
        'hopscope.fallback.reason': 'gpu_oom',
        'hopscope.fallback.model': 'llama-3-1b',
        'hopscope.fallback.from_model': 'llama-3-8b',
      });
    }
    return leaf(180 + output * 0.8)(ctx, span, start);
  };
  const embeddingBody: Body = (ctx, span, start) => {
    Object.assign(span.attributes, {
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.request.model': 'bge-small',
      'gen_ai.usage.input_tokens': 100 + Math.floor(r() * 300),
    });
    return leaf(18)(ctx, span, start);
  };
  const ragBody: Body = (ctx, span, start) => {
    let t = start + work(ctx, norm(1, 0.1));
    const shardEnds = [0, 1].map((k) => {
      const s = mk(ctx, span.spanId, `search shard ${k}`, 'internal', t, t);
      const e = t + norm(12, 2);
      s.endMs = e + (skew[nodeOf(ctx.hop, ctx.idx)] ?? 0);
      return e;
    });
    t = Math.max(...shardEnds);
    const rr = mk(ctx, span.spanId, 'rerank', 'internal', t, t);
    t += norm(6, 0.8);
    rr.endMs = t + (skew[nodeOf(ctx.hop, ctx.idx)] ?? 0);
    t += norm(0.8, 0.1);
    return { end: t, failed: faultFailure(ctx, t) };
  };
  const agentBody: Body = (ctx, span, start) => {
    let t = start + work(ctx, norm(3, 0.4));
    const failed = faultFailure(ctx, t);
    if (failed) return { end: t, failed };
    const llm = backend === 'vllm' ? 'llm-vllm' : 'llm-tgi';
    const steps = o.agentSteps ?? 1;
    for (let k = 0; k < steps; k++) {
      let res = call(ctx, span.spanId, llm, 'chat llama-3-8b', 'chat llama-3-8b', t + norm(0.3, 0.05), llmBody);
      t = res.end;
      if (res.failed) return { end: t + 0.2, failed: res.failed };
      res = call(
        ctx,
        span.spanId,
        'tool',
        'execute_tool web_search',
        'execute_tool web_search',
        t + norm(0.3, 0.05),
        leaf(25),
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'web_search' }
      );
      t = res.end;
      if (res.failed) return { end: t + 0.2, failed: res.failed };
    }
    const res = call(ctx, span.spanId, llm, 'chat llama-3-8b', 'chat llama-3-8b', t + norm(0.3, 0.05), llmBody);
    return { end: res.end + norm(1, 0.1), failed: res.failed };
  };
  const gatewayBody: Body = (ctx, span, start) => {
    const auth = mk(ctx, span.spanId, 'auth', 'internal', start + 0.1, start + 0.1);
    let t = start + 0.1 + work(ctx, norm(1.5, 0.2));
    auth.endMs = t + (skew[nodeOf(ctx.hop, ctx.idx)] ?? 0);
    const failedHere = faultFailure(ctx, t);
    if (failedHere) return { end: t + 0.5, failed: failedHere };
    const steps: Array<[string, string, string, Body, Span['attributes']?]> = [
      ['embedding', 'POST /v1/embeddings', 'embeddings bge-small', embeddingBody],
      ['vector-cache', 'GET /cache', 'cache.lookup', leaf(2.5)],
      ['rag', 'POST /retrieve', 'retrieve', ragBody],
      ['agent', 'POST /agent/invoke', 'invoke_agent', agentBody, { 'gen_ai.operation.name': 'invoke_agent' }],
    ];
    for (const [hop, cn, sn, body, attrs] of steps) {
      const res = call(ctx, span.spanId, hop, cn, sn, t + norm(0.2, 0.03), body, attrs ?? {});
      t = res.end;
      if (res.failed) return { end: t + 0.3, failed: res.failed };
    }
    // Fire-and-forget audit record: the gateway does not wait for it.
    const audit = mk(ctx, span.spanId, 'audit publish', 'producer', t - 0.5, t + 15);
    audit.endMs = t + 15 + (skew[nodeOf(ctx.hop, ctx.idx)] ?? 0);
    return { end: t + norm(0.8, 0.1) };
  };

  const driver: Ctx = { hop: 'loadgen', idx: 0 };
  const res = call(
    driver,
    undefined,
    'gateway',
    'POST /v1/chat/completions',
    'POST /v1/chat/completions',
    t0,
    gatewayBody,
    { 'http.route': '/v1/chat/completions' }
  );
  const root = spans.find((s) => s.service === 'loadgen' && s.parentSpanId === undefined);
  if (root && fault?.kind === 'timeout' && fault.hop === 'gateway') fail(root, 'timeout', 'client deadline exceeded');
  void res;

  // Routine kernel activity on every pod of the trace, and stray retransmits that are not the cause.
  const pods = [...podsUsed].sort();
  const tEnd = Math.max(...spans.map((s) => s.endMs));
  const noise = o.kernelNoise ?? 30;
  for (let k = 0; k < noise; k++) {
    const pod = pods[Math.floor(r() * pods.length)];
    const [hop, idx] = [pod.replace(/-[0-9a-f]{5}-\d+$/, ''), Number(pod.slice(pod.lastIndexOf('-') + 1))];
    const ts = t0 - 50 + r() * (tEnd - t0 + 100);
    if (r() < 0.5) kev(hop, idx, 'tls_handshake', ts, norm(12, 4), { side: 'client' });
    else kev(hop, idx, 'tcp_connect', ts, norm(2, 0.5), {});
  }
  const stray = o.strayRetransmits ?? 1;
  const healthy = pods.filter((p) => !fault || p !== podName(fault.hop, 0));
  for (let k = 0; k < stray && healthy.length; k++) {
    const pod = healthy[Math.floor(r() * healthy.length)];
    kev(
      pod.replace(/-[0-9a-f]{5}-\d+$/, ''),
      Number(pod.slice(pod.lastIndexOf('-') + 1)),
      'tcp_retransmit',
      t0 + r() * (tEnd - t0),
      undefined,
      { state: 'ESTABLISHED' }
    );
  }
  if (o.coarseStarts ?? true) for (const sp of spans) sp.startMs = Math.floor(sp.startMs);
  kernel.sort((a, b) => a.ts - b.ts);
  return {
    traceId,
    spans,
    kernelEvents: kernel,
    ...(fault ? { truth: { service: fault.hop, pod: podName(fault.hop, 0), kind: fault.kind } } : {}),
  };
}

/** Healthy traffic for a baseline: `count` traces with seeds derived from `seed`, both backends. */
export function syntheticHealthy(
  seed: number,
  count: number,
  opts: Omit<SyntheticOptions, 'seed' | 'fault'> = {}
): Span[][] {
  return Array.from(
    { length: count },
    (_, i) => syntheticTrace({ ...opts, seed: seed * 100_003 + i, backend: i % 2 ? 'tgi' : 'vllm' }).spans
  );
}
