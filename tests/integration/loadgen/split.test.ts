/**
 * Split mode: one process per pod. Each replica registers its own pid with the bpf-exporter as its pod; faults set on
 * the control API reach the replica processes; TLS links work across processes; the simulated GPUs follow the LLM
 * replicas' engines; stopping leaves no process behind.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadChainConfig } from '../../../loadgen/src/config';
import { makeLogger } from '../../../loadgen/src/log';
import { startSplitChain } from '../../../loadgen/src/chain/split';
import type { RunningChain } from '../../../loadgen/src/chain/start';
import { chat, otlpCollector, waitFor } from './support';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('split mode: one process per pod', () => {
  let chain: RunningChain & { children: import('node:child_process').ChildProcess[] };
  let collector: Awaited<ReturnType<typeof otlpCollector>>;
  let exporter: http.Server;
  const registrations: Array<{ pid: number; pod: string; service: string; node: string; namespace: string }> = [];

  before(async () => {
    collector = await otlpCollector();
    exporter = http.createServer((req, res) => {
      let b = '';
      req.on('data', (c) => {
        b += c;
      });
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/register') registrations.push(JSON.parse(b));
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => exporter.listen(0, '127.0.0.1', () => r()));
    const cfg = loadChainConfig({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      otlpEndpoint: collector.url,
      otlpProtocol: 'http/json',
      vectorCacheHitRate: 0,
      exporterUrl: `http://127.0.0.1:${(exporter.address() as AddressInfo).port}`,
    });
    chain = await startSplitChain(cfg, makeLogger('silent'));
  });
  after(async () => {
    await chain?.stop();
    await collector?.close();
    await new Promise<void>((r) => {
      exporter.close(() => r());
      exporter.closeAllConnections();
    });
  });

  it('each pod runs in its own process and registers its pid as that pod (an LLM pod its CUDA driver process too)', async () => {
    const pids = Object.values(chain.pids);
    assert.equal(new Set(pids).size, chain.hops.length);
    assert.ok(!pids.includes(process.pid));
    const llmPods = chain.hops.filter((h) => h.hop.startsWith('llm-')).map((h) => h.pod);
    assert.deepEqual(
      Object.keys(chain.gpuDriverPids).sort(),
      [...llmPods].sort(),
      'every LLM replica has its CUDA driver process'
    );
    await waitFor('registrations', async () => registrations.length === chain.hops.length + llmPods.length);
    for (const h of chain.hops) {
      // The replica's own pid first, then (LLM pods) its driver's.
      const [r, driver, ...more] = registrations.filter((x) => x.pod === h.pod);
      assert.ok(r, `${h.pod} registered`);
      assert.equal(r.pid, chain.pids[h.pod]);
      assert.equal(r.service, h.hop);
      assert.equal(r.node, h.node);
      assert.equal(r.namespace, 'hopscope-demo');
      assert.equal(driver?.pid, chain.gpuDriverPids[h.pod], `${h.pod}: driver registration`);
      if (driver) assert.deepEqual({ ...driver, pid: r.pid }, r, 'the driver is registered as the same pod');
      assert.deepEqual(more, []);
    }
    const topo = (await (await fetch(`${chain.controlUrl}/topology`)).json()) as {
      hops: Array<{ pod: string; pid: number; gpuDriverPid?: number }>;
    };
    assert.deepEqual(Object.fromEntries(topo.hops.map((h) => [h.pod, h.pid])), chain.pids);
    assert.deepEqual(
      Object.fromEntries(topo.hops.filter((h) => h.gpuDriverPid).map((h) => [h.pod, h.gpuDriverPid])),
      chain.gpuDriverPids
    );
  });

  it('serves RAG and agent (TLS to tool) requests across processes', async () => {
    assert.equal((await chat(chain.gatewayUrl, { stream: true })).status, 200);
    const agent = await chat(chain.gatewayUrl, {}, { 'x-hopscope-route': 'agent' });
    assert.equal(agent.status, 200, agent.text);
  });

  it('faults reach the replica processes', async () => {
    const before = await chat(chain.gatewayUrl, {});
    const f = (await (
      await fetch(`${chain.controlUrl}/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'embedding', kind: 'error' }),
      })
    ).json()) as { id: string };
    await new Promise((r) => setTimeout(r, 200));
    const during = await chat(chain.gatewayUrl, {});
    await fetch(`${chain.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
    await new Promise((r) => setTimeout(r, 200));
    const afterwards = await chat(chain.gatewayUrl, {});
    assert.deepEqual([before.status, during.status, afterwards.status], [200, 502, 200]);
  });

  it('GPU figures follow the LLM replica processes', async () => {
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        chat(
          chain.gatewayUrl,
          { max_tokens: 40, messages: [{ role: 'user', content: `gpu ${i}` }] },
          { 'x-hopscope-backend': 'vllm' }
        )
      )
    );
    await waitFor(
      'reported engine figures',
      async () => chain.remoteEngines.size >= 2 && [...chain.remoteEngines.values()].some((e) => e.busyMsTotal > 0)
    );
  });

  it('stop ends every replica process and every CUDA driver process', async () => {
    const pids = [...Object.values(chain.pids), ...Object.values(chain.gpuDriverPids)];
    await chain.stop();
    await waitFor('replicas gone', async () => pids.every((p) => !alive(p)), 10_000);
  });
});
