/**
 * GPU OOM the kernel can see: the chain's LLM replicas allocate their KV cache through a CUDA driver process each,
 * linked against the stand-in libcuda.so.1 (loadgen/native/), and a real bpf-exporter (root, bpftrace) puts its
 * uretprobes on that library. gpu_oom on llm-tgi → gpu_alloc_fail events on the llm-tgi pods (attributed through the
 * driver processes' registrations), each inside the window of a faulted request's llm-tgi server span, with the bytes
 * that request's engine asked for; none on llm-vllm, none before the fault.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { ChainAnswerInfo } from '../../../contract';
import { ensureCudaStandIn } from '../../../loadgen/src/chain/gpu/cuda-stand-in';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { waitFor } from '../bpf-exporter/http';
import { exporterEvents, kernelSkipReason, unattachedProbes } from './support';

const standIn = process.platform === 'linux' ? ensureCudaStandIn() : { ok: false as const, reason: 'not Linux' };
const skip = kernelSkipReason() ?? (standIn.ok ? undefined : standIn.reason);
const ms = (t: [number, number]): number => t[0] * 1000 + t[1] / 1e6;

describe('gpu_oom reaches the kernel: cuMemAlloc_v2 through the stand-in libcuda.so.1', { skip }, () => {
  let exp: Exporter;
  let chain: RunningChain;
  const spans = new InMemorySpanExporter();
  const chat = async (backend: 'vllm' | 'tgi', i: number) => {
    const res = await fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hopscope-backend': backend, 'x-hopscope-route': 'direct' },
      body: JSON.stringify({
        model: 'hopscope-llama-8b-v1',
        max_tokens: 16,
        messages: [{ role: 'user', content: `gpu oom ${backend} ${i} ${Math.random()}` }],
      }),
    });
    const body = (await res.json()) as { hopscope?: unknown };
    return { status: res.status, info: res.ok ? ChainAnswerInfo.parse(body.hopscope) : undefined };
  };
  const llmSpans = (hop: string): ReadableSpan[] =>
    spans.getFinishedSpans().filter((s) => s.resource.attributes['service.name'] === hop && s.kind === 1);

  before(async () => {
    if (!standIn.ok) return;
    // The library named explicitly, and found in the registered driver processes' maps (scanned every second).
    exp = await startExporter(
      loadConfig({
        HOPSCOPE_BPF_PORT: '0',
        HOPSCOPE_BPF_NODE: 'gpu-node',
        HOPSCOPE_BPF_PROBES: 'gpu_alloc_fail',
        HOPSCOPE_BPF_LIBCUDA: standIn.library,
        HOPSCOPE_BPF_SCAN_MS: '1000',
      }),
      pino({ level: 'warn' })
    );
    await exp.pipeline.settled(60_000);
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      vectorCacheHitRate: 0,
      samplerAdaptive: false,
      otlpEndpoint: 'http://127.0.0.1:9/v1/traces',
      spanProcessors: [new SimpleSpanProcessor(spans)],
      exporterUrl: exp.url,
    });
  });
  after(async () => {
    await chain?.stop();
    await exp?.stop();
  });

  test("the probe is attached to the stand-in and every LLM pod's driver process is registered as that pod", async () => {
    let why: string[] = [];
    await waitFor(
      'gpu_alloc_fail attached',
      async () => {
        why = await unattachedProbes(exp);
        return why.length === 0 || undefined;
      },
      45_000
    ).catch(() => assert.fail(`gpu_alloc_fail not attached: ${why.join('; ')}`));
    const llmPods = chain.hops.filter((h) => h.hop.startsWith('llm-')).map((h) => h.pod);
    assert.deepEqual(Object.keys(chain.gpuDriverPids).sort(), [...llmPods].sort());
    await waitFor('driver registrations', async () => {
      const regs = (
        (await (await fetch(`${exp.url}/register`)).json()) as { registrations: Array<{ pid: number; pod: string }> }
      ).registrations;
      return llmPods.every((p) => regs.some((r) => r.pid === chain.gpuDriverPids[p] && r.pod === p)) || undefined;
    });
  });

  test('gpu_oom on llm-tgi: one gpu_alloc_fail per failed allocation, on the right pod, inside its request', async () => {
    const t0 = Date.now();
    // Healthy first: successful allocations are not events.
    for (let i = 0; i < 3; i++) assert.equal((await chat('tgi', i)).status, 200);
    const healthyEnd = Date.now();
    const f = (await (
      await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'llm-tgi', kind: 'gpu_oom', magnitude: 1 }),
      })
    ).json()) as { id: string };
    const faultedFrom = Date.now();
    const answers = [];
    for (let i = 0; i < 6; i++) {
      answers.push(await chat('tgi', i));
      answers.push(await chat('vllm', i));
      await new Promise((r) => setTimeout(r, 50));
    }
    await fetch(`${chain.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
    const to = Date.now();
    // Every 8B admission on TGI fails: answered by the fallback model (or 502 when the fallback's allocation fails too).
    const tgiAnswers = answers.filter((_, i) => i % 2 === 0);
    assert.ok(
      tgiAnswers.every((a) => a.status === 502 || a.info?.responseModel === 'hopscope-llama-1b'),
      JSON.stringify(tgiAnswers)
    );
    assert.ok(
      tgiAnswers.some(
        (a) => a.info?.requestedModel === 'hopscope-llama-8b-v1' && a.info.responseModel === 'hopscope-llama-1b'
      )
    );
    assert.ok(
      answers
        .filter((_, i) => i % 2 === 1)
        .every((a) => a.status === 200 && a.info?.responseModel === 'hopscope-llama-8b-v1'),
      'vLLM unaffected'
    );

    const failures = llmSpans('llm-tgi').flatMap((s) =>
      s.events.filter((e) => e.name === 'gpu.allocation_failure').map((e) => ({ span: s, e }))
    );
    assert.ok(failures.length >= 6, `${failures.length} failed allocations on llm-tgi spans`);
    for (const { e } of failures)
      assert.equal(e.attributes?.['hopscope.cuda.result'], 2, 'the driver answered CUDA_ERROR_OUT_OF_MEMORY');
    const events = await waitFor(
      'gpu_alloc_fail events',
      async () => {
        const ev = await exporterEvents(exp, `from=${t0 - 1000}&to=${to + 5000}&type=gpu_alloc_fail`);
        return ev.filter((x) => x.pod?.startsWith('llm-tgi-')).length >= failures.length ? ev : undefined;
      },
      20_000
    );
    const tgiEvents = events.filter((x) => x.pod?.startsWith('llm-tgi-'));
    assert.equal(
      events.length,
      tgiEvents.length,
      `no events on other pods: ${JSON.stringify(events.filter((x) => !x.pod?.startsWith('llm-tgi-')))}`
    );
    assert.equal(tgiEvents.length, failures.length, 'one kernel event per failed allocation');
    assert.ok(
      tgiEvents.every((x) => x.ts >= healthyEnd),
      'none before the fault'
    );
    for (const ev of tgiEvents) {
      assert.equal(ev.detail.function, 'cuMemAlloc_v2');
      assert.equal(ev.detail.error, 'CUDA_ERROR_OUT_OF_MEMORY');
      assert.equal(ev.pid, chain.gpuDriverPids[ev.pod!], "the event comes from that pod's driver process");
      // Inside the request it failed: same pod, same size, within its server span (a few ms of clock slack).
      const match = failures.find(
        ({ span, e }) =>
          span.resource.attributes['k8s.pod.name'] === ev.pod &&
          e.attributes?.['hopscope.gpu.allocation_bytes'] === ev.detail.bytes &&
          ev.ts >= ms(span.startTime) - 15 &&
          ev.ts <= ms(span.endTime) + 15
      );
      assert.ok(
        match,
        `event at ${ev.ts} (${ev.detail.bytes} B on ${ev.pod}) lies in no faulted request: ${JSON.stringify(failures.map(({ span, e }) => [span.resource.attributes['k8s.pod.name'], e.attributes?.['hopscope.gpu.allocation_bytes'], ms(span.startTime), ms(span.endTime)]))}`
      );
      assert.ok(ev.ts >= faultedFrom - 15);
    }
    const metrics = await (await fetch(`${exp.url}/metrics`)).text();
    assert.match(
      metrics,
      /hopscope_gpu_alloc_failures_total\{[^}]*pod="llm-tgi-[^"]+"[^}]*error="CUDA_ERROR_OUT_OF_MEMORY"\} [1-9]/
    );
  });
});
