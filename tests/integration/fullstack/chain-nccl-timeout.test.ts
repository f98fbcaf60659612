/**
 * nccl_timeout the kernel can see (hopscope-test: alone: it times requests against the watchdog): the chain with
 * HOPSCOPE_TP=2 (each LLM replica a tensor-parallel group, one rank process per rank linked against the stand-in
 * libnccl.so.2, each registered with the exporter as its rank's pod), a real bpf-exporter (root, bpftrace)
 * whose nccl_collective uprobe/uretprobe pair on ncclAllReduce is attached to the stand-in found in the rank
 * processes' maps, and the backend proxy with the chain's OTLP in its embedded store and that exporter as a source.
 * nccl_timeout on rank 1 of llm-vllm-0 → every request on the group hangs until the watchdog (2 s) and fails (500 at
 * the LLM, EngineDeadError), the group restarts and answers again; the exporter reports the stalled call on
 * llm-vllm-0-1 (≥ the watchdog, ncclTimeout) and nothing before the fault; the root cause of a failed trace names the
 * group, rank 1 and ncclAllReduce, with the kernel's evidence.
 * The chain runs in split mode (one process per pod; each llm-vllm replica process starts its group's rank
 * processes, and the fault reaches it through the chain's control API).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Exporter } from '../../../bpf-exporter/src/server';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { RcaAnswer, TraceDetail, type KernelEvent } from '../../../contract';
import { ensureNcclStandIn } from '../../../loadgen/src/chain/gpu/nccl-stand-in';
import { DEFAULT_REPLICAS } from '../../../loadgen/src/chain/topology';
import { waitFor } from '../bpf-exporter/http';
import { freePort } from '../../support/real-servers';
import { exporterEvents, kernelSkipReason, startKernelChain, unattachedProbes, type SplitChain } from './support';

const standIn = process.platform === 'linux' ? ensureNcclStandIn() : { ok: false as const, reason: 'not Linux' };
const skip = kernelSkipReason() ?? (standIn.ok ? undefined : standIn.reason);
const WATCHDOG_S = 2;
/** The llm-vllm replica's pod (the group's leader) and rank 1's pod (LeaderWorkerSet names: `<group>-1`). */
let GROUP = '';
let RANK1 = '';

describe('nccl_timeout reaches the kernel: ncclAllReduce through the stand-in libnccl.so.2', { skip }, () => {
  let exp: Exporter;
  let chain!: SplitChain;
  let proxy: RunningProxy;
  const registrations = async (): Promise<Array<{ pid: number; pod: string }>> =>
    ((await (await fetch(`${exp.url}/register`)).json()) as { registrations: Array<{ pid: number; pod: string }> })
      .registrations;
  const chat = async (tag: string, traceId = randomBytes(16).toString('hex')) => {
    const t0 = performance.now();
    const res = await fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hopscope-backend': 'vllm',
        'x-hopscope-route': 'direct',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: JSON.stringify({
        model: 'hopscope-llama-8b-v1',
        max_tokens: 8,
        messages: [{ role: 'user', content: `nccl ${tag} ${Math.random()}` }],
      }),
    });
    await res.text();
    return { status: res.status, ms: performance.now() - t0, traceId };
  };

  before(async () => {
    if (!standIn.ok) return;
    const proxyPort = await freePort();
    ({ exp, chain } = await startKernelChain(
      {
        timeScale: 0.05,
        samplerAdaptive: false,
        vectorCacheHitRate: 0,
        replicas: { ...DEFAULT_REPLICAS, rag: 1, 'llm-vllm': 1, 'llm-tgi': 1 },
        tensorParallel: 2,
        executeModelTimeoutS: WATCHDOG_S,
        otlpEndpoint: `http://127.0.0.1:${proxyPort}/v1/traces`,
      },
      { HOPSCOPE_BPF_NODE: 'gpu-node', HOPSCOPE_BPF_PROBES: 'nccl_collective', HOPSCOPE_BPF_SCAN_MS: '1000' }
    ));
    GROUP = chain.hops.find((h) => h.hop === 'llm-vllm')!.pod;
    RANK1 = `${GROUP}-1`;
    proxy = await startProxy({
      port: proxyPort,
      exporterUrls: [exp.url],
      chainControlUrl: chain.controlUrl,
      sourceTimeoutMs: 5000,
    });
  });
  after(async () => {
    await chain?.stop().catch(() => {});
    await proxy?.close().catch(() => {});
    await exp?.stop().catch(() => {});
  });

  let faultFrom = 0;
  let faultTo = 0;
  let failed: Array<{ status: number; ms: number; traceId: string }> = [];

  test("each rank's process is registered as its pod, and the probe attaches to the stand-in in their maps", async () => {
    await waitFor(
      'rank processes registered',
      async () => {
        const regs = await registrations();
        return [GROUP, RANK1].every((p) => regs.some((r) => r.pod === p && r.pid !== chain.pids[p])) || undefined;
      },
      30_000
    );
    let why: string[] = [];
    await waitFor(
      'nccl_collective attached',
      async () => {
        why = await unattachedProbes(exp);
        return why.length === 0 || undefined;
      },
      60_000
    ).catch(() => assert.fail(`nccl_collective not attached: ${why.join('; ')}`));
    // Healthy: collectives are fast, none reported.
    for (let i = 0; i < 4; i++) assert.equal((await chat(`warm ${i}`)).status, 200);
    const quiet = await exporterEvents(exp, 'from=now-5m&to=now&type=nccl_slow_collective');
    assert.deepEqual(quiet, [], 'no slow collective while the group is healthy');
  });

  test('nccl_timeout on rank 1: requests hang until the watchdog, fail, and the group restarts', async () => {
    const f = (await (
      await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'llm-vllm', pod: GROUP, kind: 'nccl_timeout', magnitude: 1, durationS: 60 }),
      })
    ).json()) as { id: string; note?: string };
    assert.equal(f.note, `rank 1's ncclAllReduce stalls on ${GROUP} until the watchdog (${WATCHDOG_S} s)`);
    faultFrom = Date.now();
    failed = await Promise.all([0, 1, 2].map((i) => chat(`stalled ${i}`)));
    await fetch(`${chain.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
    faultTo = Date.now();
    for (const r of failed) {
      assert.ok(r.status >= 500, `failed: ${r.status}`);
      assert.ok(r.ms >= WATCHDOG_S * 1000 - 50, `hung until the watchdog: ${Math.round(r.ms)} ms`);
    }
    // The group comes back (new rank processes) and answers again.
    await waitFor('the group answers again', async () => (await chat('after')).status === 200 || undefined, 30_000);
  });

  test('the exporter reports the stalled ncclAllReduce on rank 1, and the root cause names the group, rank and collective', async () => {
    const events = await waitFor(
      'nccl_slow_collective events',
      async () => {
        const ev = await exporterEvents(exp, `from=${faultFrom - 1000}&to=${faultTo + 5000}&type=nccl_slow_collective`);
        return ev.length ? ev : undefined;
      },
      20_000
    );
    const regs = await registrations();
    for (const e of events as KernelEvent[]) {
      assert.equal(e.pod, RANK1, `only the stalled rank's call is slow: ${JSON.stringify(e)}`);
      assert.equal(e.detail.function, 'ncclAllReduce');
      assert.equal(e.detail.resultName, 'ncclTimeout', 'returned once the watchdog aborted the communicator');
      assert.ok((e.durationMs ?? 0) >= WATCHDOG_S * 1000 - 50, `took ${e.durationMs} ms`);
      assert.ok(
        regs.some((r) => r.pod === RANK1 && r.pid === e.pid),
        "from rank 1's registered process"
      );
      assert.ok(e.ts >= faultFrom);
    }
    const metrics = await (await fetch(`${exp.url}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(
        `hopscope_nccl_slow_collective_duration_seconds_count\\{[^}]*pod="${RANK1}"[^}]*collective="ncclAllReduce",result="ncclTimeout"\\} [1-9]`
      )
    );

    const traceId = failed[0].traceId;
    const detail = await waitFor(
      'the failed trace in the store',
      async () => {
        const res = await fetch(`${proxy.url}/api/traces/${traceId}`);
        if (!res.ok) return undefined;
        const d = TraceDetail.parse(await res.json());
        return d.spans.some((s) => s.service === 'llm-vllm' && s.attributes['hopscope.nccl.rank'] === 1)
          ? d
          : undefined;
      },
      30_000
    );
    const llm = detail.spans.find((s) => s.service === 'llm-vllm' && s.kind === 'server')!;
    assert.equal(llm.attributes['hopscope.nccl.collective'], 'ncclAllReduce');
    assert.equal(llm.attributes['hopscope.llm.tp_group'], GROUP);
    const a = RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${traceId}/rca`)).json());
    const top = a.candidates[0];
    assert.deepEqual([top.service, top.pod], ['llm-vllm', GROUP], JSON.stringify(a.candidates.slice(0, 3)));
    const e = top.evidence.find((x) => x.kind === 'nccl_timeout');
    assert.ok(e, JSON.stringify(top.evidence));
    assert.equal(e.group, GROUP);
    assert.equal(e.rank, 1);
    assert.equal(e.rankPod, RANK1);
    assert.equal(e.collective, 'ncclAllReduce');
    assert.equal(e.source, 'spans+ebpf', 'the kernel evidence joined');
    assert.ok(
      (a.verdict ?? '').includes(`rank 1 (pod ${RANK1}) stalled in ncclAllReduce`),
      `the verdict names the rank: ${a.verdict}`
    );
  });
});
