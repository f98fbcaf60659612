/**
 * gpu_memory_leak end to end, nothing simulated below the chain but the GPU: the chain in split mode (one process per
 * pod, each LLM replica with its CUDA driver process linked against the stand-in libcuda.so.1), a real bpf-exporter
 * whose gpu_memory_held probe puts uprobes on that library's cuMemAlloc_v2 (with a uretprobe) and cuMemFree_v2, and the
 * backend proxy with the chain's OTLP in its embedded store and the exporter as its kernel evidence source.
 * Healthy serving allocates and frees (held stays flat, no record); the leak on one llm-vllm pod (256 MiB/s) makes its
 * driver's held memory climb in the exporter's records and hopscope_gpu_memory_held_bytes, DCGM_FI_DEV_FB_USED on
 * its GPUs follows, the root cause of a trace served there names that pod before the first out-of-memory (and not the
 * other pod's traces), then allocations fail (gpu_alloc_fail) and requests fall back; when the fault ends the frees
 * bring held memory back down. Runs bpftrace, so tests/run.ts runs it alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Exporter } from '../../../bpf-exporter/src/server';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { ChainAnswerInfo, RcaAnswer, TRACERESPONSE_RE, TraceDetail } from '../../../contract';
import { ensureCudaStandIn } from '../../../loadgen/src/chain/gpu/cuda-stand-in';
import { DEFAULT_REPLICAS } from '../../../loadgen/src/chain/topology';
import { waitFor } from '../bpf-exporter/http';
import { freePort } from '../../support/real-servers';
import { exporterEvents, kernelSkipReason, startKernelChain, unattachedProbes, type SplitChain } from './support';

const standIn = process.platform === 'linux' ? ensureCudaStandIn() : { ok: false as const, reason: 'not Linux' };
const skip = kernelSkipReason() ?? (standIn.ok ? undefined : standIn.reason);
const MiB = 2 ** 20;
const GiB = 2 ** 30;
const LEAK_MIB_S = 256;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe(
  'gpu_memory_leak: real uprobes on the stand-in driver, DCGM, and the root cause naming the pod',
  { skip },
  () => {
    let exp: Exporter;
    let chain: SplitChain;
    let proxy: RunningProxy;
    let leaking = '';
    let other = '';
    let faultId = '';

    /** One direct vLLM request: its status, the answer's models, its trace id. */
    const chat = async (i: number) => {
      const res = await fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' },
        body: JSON.stringify({
          model: 'hopscope-llama-8b-v1',
          max_tokens: 16,
          messages: [{ role: 'user', content: `gpu leak ${i} ${Math.random()}` }],
        }),
      });
      const body = (await res.json()) as { hopscope?: unknown };
      const traceId = TRACERESPONSE_RE.exec(res.headers.get('traceresponse') ?? '')?.[1];
      return { status: res.status, info: res.ok ? ChainAnswerInfo.parse(body.hopscope) : undefined, traceId };
    };
    /** Exporter metric value for a pod (0 when absent). */
    const metric = async (name: string, pod: string, extra = ''): Promise<number> => {
      const text = await (await fetch(`${exp.url}/metrics`)).text();
      const m = new RegExp(`^${name}\\{[^}]*pod="${pod}"[^}]*${extra}[^}]*\\} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : 0;
    };
    /** DCGM_FI_DEV_FB_USED summed over a pod's GPUs (MiB), from the chain's dcgm-exporters. */
    const fbUsed = async (pod: string): Promise<number> => {
      let sum = 0;
      for (const d of chain.dcgm)
        for (const l of (await (await fetch(d.metricsUrl)).text()).split('\n'))
          if (l.startsWith('DCGM_FI_DEV_FB_USED{') && l.includes(`pod="${pod}"`)) sum += Number(l.split(' ').pop());
      return sum;
    };
    /** The pod the trace's llm-vllm server span ran on, once the proxy's store has it. */
    const llmPodOf = async (traceId: string): Promise<string | undefined> => {
      const res = await fetch(`${proxy.url}/api/traces/${traceId}`);
      if (!res.ok) return undefined;
      const s = TraceDetail.parse(await res.json()).spans.find((x) => x.service === 'llm-vllm' && x.kind === 'server');
      return s?.resource['k8s.pod.name'] as string | undefined;
    };
    const rca = async (traceId: string) =>
      RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${traceId}/rca`)).json());

    before(async () => {
      if (!standIn.ok) return;
      const proxyPort = await freePort();
      ({ exp, chain } = await startKernelChain(
        {
          timeScale: 0.05,
          samplerAdaptive: false,
          vectorCacheHitRate: 0,
          otlpEndpoint: `http://127.0.0.1:${proxyPort}/v1/traces`,
          // Two llm-vllm pods (one leaks, one does not), one of each other hop: fewer processes to start.
          replicas: { ...DEFAULT_REPLICAS, rag: 1, 'llm-tgi': 1 },
        },
        {
          HOPSCOPE_BPF_NODE: 'gpu-node',
          HOPSCOPE_BPF_PROBES: 'gpu_memory_held,gpu_alloc_fail',
          HOPSCOPE_BPF_LIBCUDA: standIn.library,
          HOPSCOPE_BPF_SCAN_MS: '1000',
        }
      ));
      proxy = await startProxy({ port: proxyPort, exporterUrls: [exp.url], sourceTimeoutMs: 5000 });
      [leaking, other] = chain.hops.filter((h) => h.hop === 'llm-vllm').map((h) => h.pod);
    });
    after(async () => {
      if (faultId) await fetch(`${chain.controlUrl}/faults/${faultId}`, { method: 'DELETE' }).catch(() => {});
      await chain?.stop().catch(() => {});
      await proxy?.close().catch(() => {});
      await exp?.stop().catch(() => {});
    });

    test('attached to the stand-in; healthy serving allocates and frees: held flat, no growth recorded', async () => {
      let why: string[] = [];
      await waitFor(
        'probes attached',
        async () => {
          why = await unattachedProbes(exp);
          return why.length === 0 || undefined;
        },
        45_000
      ).catch(() => assert.fail(`not attached: ${why.join('; ')}`));
      await waitFor('driver registrations', async () => {
        const regs = (
          (await (await fetch(`${exp.url}/register`)).json()) as { registrations: Array<{ pid: number; pod: string }> }
        ).registrations;
        return (
          [leaking, other].every((p) => regs.some((r) => r.pid === chain.gpuDriverPids[p] && r.pod === p)) || undefined
        );
      });
      const t0 = Date.now();
      for (let i = 0; i < 8; i++) assert.equal((await chat(i)).status, 200);
      // Both pods served (round robin) and each allocation was freed again.
      for (const pod of [leaking, other]) {
        // (An allocation and its free may straddle a kernel flush: then the next flush has both.)
        const seen = await waitFor(`${pod}: allocations counted, each freed`, async () => {
          const allocs = await metric('hopscope_gpu_memory_calls_total', pod, 'call="alloc"');
          const frees = await metric('hopscope_gpu_memory_calls_total', pod, 'call="free"');
          const held = await metric('hopscope_gpu_memory_held_bytes', pod);
          return (allocs >= 1 && allocs === frees && held === 0 && { allocs, frees }) || undefined;
        });
        assert.ok(seen.allocs >= 1);
      }
      // A request's own KV allocation (~70 MiB) held across a kernel flush can cross one 64 MiB step and leave a record
      // on a busy machine; healthy serving never grows held memory the way a leak does.
      const healthy = await exporterEvents(exp, `from=${t0 - 1000}&to=${Date.now() + 1000}&type=gpu_memory_held`);
      assert.deepEqual(
        healthy.filter((r) => (r.detail.grewBytes as number) >= GiB / 4),
        [],
        'no record of growth past 256 MiB'
      );
    });

    test('the leak: held memory climbs in the records and the metric, FB_USED follows, root cause names the pod before any OOM', async () => {
      // FB_USED includes the KV cache of the requests in flight at a replica's last report (every 500 ms): read both
      // pods once a report has come after the previous test's requests ended (idle), as the reading after the leak is.
      await sleep(600);
      const fbBefore = await fbUsed(leaking);
      const fbOtherBefore = await fbUsed(other);
      const res = await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          target: 'llm-vllm',
          pod: leaking,
          kind: 'gpu_memory_leak',
          magnitude: LEAK_MIB_S,
          durationS: 120,
        }),
      });
      assert.equal(res.status, 201, await res.clone().text());
      faultId = ((await res.json()) as { id: string }).id;
      const from = Date.now();
      // Requests meanwhile, until 1.5 GiB is held (about 6 s at 256 MiB/s; the 4 GiB pool lasts 16 s).
      const traces: string[] = [];
      let i = 0;
      await waitFor(
        'held ≥ 1.5 GiB',
        async () => {
          const a = await chat(100 + i++);
          assert.equal(a.status, 200, 'no OOM yet');
          if (a.traceId) traces.push(a.traceId);
          return (await metric('hopscope_gpu_memory_held_bytes', leaking)) >= 1.5 * GiB || undefined;
        },
        30_000
      );
      const heldNow = await metric('hopscope_gpu_memory_held_bytes', leaking);
      assert.ok(heldNow < 4 * GiB, `${heldNow} B: not yet the whole pool`);
      assert.deepEqual(
        await exporterEvents(exp, `from=${from - 1000}&to=${Date.now() + 1000}&type=gpu_alloc_fail`),
        [],
        'no allocation failed yet'
      );
      // The other pod served requests meanwhile (round robin): each one's allocation is freed when it ends, but an
      // allocation and its free may straddle a kernel flush, so the metric is read once every counted allocation has its
      // free counted too; then it holds nothing (a leak there would never get there).
      const otherSeen = await waitFor(
        `${other}: every counted allocation freed`,
        async () => {
          const allocs = await metric('hopscope_gpu_memory_calls_total', other, 'call="alloc"');
          const frees = await metric('hopscope_gpu_memory_calls_total', other, 'call="free"');
          return allocs === frees ? { allocs, held: await metric('hopscope_gpu_memory_held_bytes', other) } : undefined;
        },
        10_000
      ).catch(async () => ({ allocs: -1, held: await metric('hopscope_gpu_memory_held_bytes', other) }));
      assert.equal(otherSeen.held, 0, `the other pod holds nothing (allocations counted: ${otherSeen.allocs})`);

      const all = await exporterEvents(exp, `from=${from - 1000}&to=${Date.now() + 1000}&type=gpu_memory_held`);
      // Growth past 256 MiB is the leak's alone (a request's own allocation, ~70 MiB, may leave a record on either pod).
      const grown = all.filter((r) => (r.detail.grewBytes as number) >= GiB / 4);
      assert.ok(grown.length > 0, 'records of the growth');
      assert.ok(
        grown.every((r) => r.pod === leaking && r.pid === chain.gpuDriverPids[leaking]),
        JSON.stringify(grown.slice(0, 3))
      );
      const records = all.filter((r) => r.pod === leaking);
      assert.ok(records.length >= 10, `${records.length} records (one per 64 MiB)`);
      const last = grown.reduce((a, b) => ((b.detail.grewBytes as number) > (a.detail.grewBytes as number) ? b : a));
      assert.equal(last.detail.function, 'cuMemAlloc_v2');
      assert.ok((last.detail.grewBytes as number) >= 1.4 * GiB, JSON.stringify(last.detail));
      // The growth over its time is the fault's rate (the leak's ticks, within what a loaded machine delays).
      const rate = (last.detail.grewBytes as number) / MiB / ((last.detail.overMs as number) / 1000);
      assert.ok(rate > LEAK_MIB_S * 0.5 && rate < LEAK_MIB_S * 1.3, `${rate.toFixed(0)} MiB/s`);

      // DCGM: the pod's framebuffer use rose by what its driver holds (up to the 15 MiB of KV-cache use in between).
      await sleep(600); // the replica reports its engine figures every 500 ms
      const fbGrew = (await fbUsed(leaking)) - fbBefore;
      assert.ok(fbGrew >= (1.4 * GiB) / MiB, `FB_USED +${fbGrew} MiB`);
      // The other pod's use moves only with the KV cache of the requests it serves meanwhile (128 KiB a token): far
      // less than the leak, whichever instant the scrape caught.
      const otherMoved = Math.abs((await fbUsed(other)) - fbOtherBefore);
      assert.ok(
        otherMoved < fbGrew / 4,
        `the other pod's FB_USED moved ${otherMoved} MiB, the leaking pod's +${fbGrew} MiB`
      );

      // Root cause of a trace served on the leaking pod, through the proxy (kernel events from the exporter).
      let onLeaking: string | undefined;
      let onOther: string | undefined;
      await waitFor(
        'traces in the store',
        async () => {
          for (const t of traces.slice(-6)) {
            const pod = await llmPodOf(t);
            if (pod === leaking) onLeaking = t;
            if (pod === other) onOther = t;
          }
          return (onLeaking && onOther) || undefined;
        },
        15_000
      );
      const a = await rca(onLeaking!);
      const leak = a.candidates.find((c) => c.pod === leaking)?.evidence.find((e) => e.kind === 'gpu_memory_leak');
      assert.ok(leak, JSON.stringify(a.candidates.map((c) => [c.pod, c.score, c.evidence.map((e) => e.kind)])));
      assert.match(leak.summary, new RegExp(`^GPU memory held by ${leaking} grew \\d+\\.\\d GiB in \\d`));
      assert.equal(a.candidates[0].pod, leaking);
      assert.match(a.verdict ?? '', new RegExp(`^GPU memory held by ${leaking} grew`));
      const b = await rca(onOther!);
      assert.ok(
        b.candidates.every((c) => c.evidence.every((e) => e.kind !== 'gpu_memory_leak')),
        "the other pod's trace: no leak"
      );
    });

    test('then allocations fail (GPU OOM) and requests fall back; the fault ends and the frees bring held memory down', async () => {
      const from = Date.now();
      const answers: Array<Awaited<ReturnType<typeof chat>>> = [];
      await waitFor(
        'an OOM on the leaking pod',
        async () => {
          answers.push(await chat(1000 + answers.length));
          const ev = await exporterEvents(exp, `from=${from - 20_000}&to=${Date.now() + 1000}&type=gpu_alloc_fail`);
          return (
            (ev.length > 0 &&
              answers.some((x) => x.status !== 200 || x.info?.responseModel !== 'hopscope-llama-8b-v1')) ||
            undefined
          );
        },
        40_000
      );
      const fails = await exporterEvents(exp, `from=${from - 20_000}&to=${Date.now() + 1000}&type=gpu_alloc_fail`);
      assert.ok(
        fails.every((e) => e.pod === leaking && e.detail.error === 'CUDA_ERROR_OUT_OF_MEMORY'),
        JSON.stringify(fails.slice(0, 3))
      );
      const held = await metric('hopscope_gpu_memory_held_bytes', leaking);
      assert.ok(held >= 3.5 * GiB && held <= 4 * GiB, `${held} B held at the pool's end`);

      assert.equal((await fetch(`${chain.controlUrl}/faults/${faultId}`, { method: 'DELETE' })).status < 300, true);
      faultId = '';
      await waitFor(
        'held back to 0',
        async () => (await metric('hopscope_gpu_memory_held_bytes', leaking)) === 0 || undefined,
        15_000
      );
      const down = await exporterEvents(exp, `from=${from}&to=${Date.now() + 1000}&type=gpu_memory_held`);
      assert.ok(
        down.some((e) => e.detail.op === 'free' && e.detail.function === 'cuMemFree_v2' && e.detail.grewBytes === 0),
        'records of the frees'
      );
      assert.equal((await chat(5000)).status, 200);
    });
  }
);
