/**
 * Issue 18's Done-when on the real chain: the simulated chain in split mode (one process per pod, one vLLM replica),
 * its OTLP in the proxy's embedded store, a real Prometheus scraping every pod's /metrics (the chain's http_sd
 * targets, with their `pod` label), and the proxy's per-trace root cause (GET /api/traces/:id/rca).
 *  1. A long prompt (6,000 tokens of filler) after a baseline of short ones: `llm_prefill` on the vLLM hop,
 *     its prompt tokens against the usual, the verdict "long prompt".
 *  2. A burst beyond vLLM's running-sequence limit (the simulated engine runs 32 at once; 48 arrive): the slowest
 *     trace's top candidate is llm-vllm and its pod, with `llm_queue` naming the waiting requests and KV usage read
 *     from Prometheus (vllm:num_requests_waiting, vllm:kv_cache_usage_perc), the verdict names the pod and its queue,
 *     and `llmPhases` holds the queue phase.
 * The answer is read only from the engine's `llm_request` span and its metrics, as a real vLLM's would be.
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RcaAnswer, TraceDetail, TraceList } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { loadChainConfig } from '../../../loadgen/src/config';
import { makeLogger } from '../../../loadgen/src/log';
import { startSplitChain } from '../../../loadgen/src/chain/split';
import { DEFAULT_REPLICAS, type HopName } from '../../../loadgen/src/chain/topology';
import { fillerText } from '../../../loadgen/src/shared/text';
import { chat, startPrometheus, waitFor } from '../loadgen/support';
import type { SplitChain } from './support';

/** Short prompts of the baseline: enough healthy samples per phase (the pass needs 5) to outweigh nothing. */
const WARM = 24;
/** The simulated vLLM's max_num_seqs is 32: 16 of these wait for a slot. */
const BURST = 48;
const SYSTEM = 'You are the Hopscope test assistant.';

describe('full stack: the LLM hop explained from the engine span and a real Prometheus', () => {
  let chain: SplitChain;
  let proxy: RunningProxy;
  let prom: Awaited<ReturnType<typeof startPrometheus>>;
  let vllmPod = '';
  const getJson = async (path: string): Promise<any> => (await fetch(`${proxy.url}${path}`)).json();
  const rca = async (id: string) => {
    const res = await fetch(`${proxy.url}/api/traces/${id}/rca`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return RcaAnswer.parse(body);
  };
  const durationOf = (d: TraceDetail): number =>
    Math.max(...d.spans.map((s) => s.endMs)) - Math.min(...d.spans.map((s) => s.startMs));
  /** The window's traces whose vLLM engine span (`llm_request`) is in the store, slowest first. */
  const vllmTraces = async (from: number, to: number): Promise<TraceDetail[]> => {
    const l = TraceList.parse(await getJson(`/api/traces?from=${from}&to=${to}&limit=200`));
    const d = await Promise.all(
      l.traces.map(async (t) => TraceDetail.parse(await getJson(`/api/traces/${t.traceId}`)))
    );
    return d
      .filter((x) => x.spans.some((s) => s.service === 'llm-vllm' && s.name === 'llm_request'))
      .sort((a, b) => durationOf(b) - durationOf(a));
  };
  const ask = (content: string, maxTokens: number) =>
    chat(
      chain.gatewayUrl,
      {
        max_tokens: maxTokens,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content },
        ],
      },
      { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' }
    );
  const promValue = async (q: string): Promise<number | undefined> => {
    const r = await prom.query(q);
    return r.length ? Number(r[0].value[1]) : undefined;
  };

  before(async () => {
    // The chain's OTLP endpoint is fixed when it starts: hold a port for the proxy until the proxy takes it.
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const proxyPort = (holder.address() as AddressInfo).port;
    const replicas = Object.fromEntries(Object.keys(DEFAULT_REPLICAS).map((h) => [h, 1])) as Record<HopName, number>;
    const cfg = loadChainConfig({
      gatewayPort: 0,
      controlPort: 0,
      logLevel: 'silent',
      // Real time: the queue of a burst lasts seconds, so the 1 s scrapes see it.
      timeScale: 1,
      samplerAdaptive: false,
      hopTimeoutMs: 60_000,
      cudaStandIn: false,
      replicas,
      otlpEndpoint: `http://127.0.0.1:${proxyPort}/v1/traces`,
    });
    try {
      // Split mode picks its ports before forking the replicas: on this shared machine one may be taken meanwhile.
      for (let attempt = 1; ; attempt++) {
        try {
          chain = await startSplitChain(cfg, makeLogger('silent'));
          break;
        } catch (err) {
          if (attempt >= 3) throw err;
        }
      }
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
    prom = await startPrometheus(`${chain.controlUrl}/targets`);
    proxy = await startProxy({
      port: proxyPort,
      exporterUrls: [],
      prometheusUrl: prom.url,
      chainControlUrl: chain.controlUrl,
      scrapeIntervalMs: 1000,
      sourceTimeoutMs: 10_000,
    });
    vllmPod = chain.hops.find((h) => h.hop === 'llm-vllm')!.pod;
    // Readiness: Prometheus scrapes the vLLM pod (by its pod label), idle.
    await waitFor(
      'the vLLM pod scraped idle',
      async () => (await promValue(`sum(vllm:num_requests_waiting{pod="${vllmPod}"})`)) === 0,
      60_000
    );
    // Healthy traffic: the baseline of every phase, short prompts, four at a time (far below 32 sequences).
    for (let i = 0; i < WARM; i += 4) {
      const rs = await Promise.all([0, 1, 2, 3].map((k) => ask(`warm ${i + k}: what is a KV cache?`, 16)));
      for (const r of rs) assert.equal(r.status, 200, r.text.slice(0, 200));
    }
    await chain.forceFlush();
    await waitFor(
      'the baseline traces in the store',
      async () => (await vllmTraces(Date.now() - 120_000, Date.now())).length >= WARM,
      30_000
    );
  });

  after(async () => {
    await chain?.stop().catch(() => {});
    await proxy?.close().catch(() => {});
    await prom?.stop().catch(() => {});
  });

  test('a long prompt after short ones: llm_prefill on the vLLM hop, its tokens against the usual', async (t) => {
    const from = Date.now();
    // 6,000 prompt tokens of filler (as the chain counts them) behind a unique number: no prefix-cache hit.
    const filler = `${Math.random()} ${fillerText(6000, 4242)}`;
    const r = await ask(`summarise this: ${filler}`, 16);
    assert.equal(r.status, 200, r.text.slice(0, 200));
    const to = Date.now();
    await chain.forceFlush();
    const [d] = await waitFor('the long-prompt trace', async () => {
      const x = await vllmTraces(from - 50, to + 50);
      return x.length ? x : undefined;
    });
    const a = await rca(d.traceId);
    const top = a.candidates[0];
    const brief = JSON.stringify(
      a.candidates.slice(0, 3).map((c) => [c.service, c.pod, c.evidence.map((e) => e.kind)])
    );
    assert.equal(top?.service, 'llm-vllm', `${brief}; missing: ${a.missing.join(' | ')}`);
    assert.equal(top.pod, vllmPod);
    const pf = top.evidence.find((e) => e.kind === 'llm_prefill');
    assert.ok(pf, brief);
    assert.ok(Number(pf.promptTokens) >= 5000, pf.summary);
    assert.ok(Number(pf.baselinePromptTokens) < 100, pf.summary);
    assert.ok(Number(pf.valueMs) > Number(pf.baselineMs), pf.summary);
    assert.match(a.verdict ?? '', new RegExp(`^long prompt at ${vllmPod}: prefill .* for [\\d,]+ prompt tokens`));
    const lp = a.llmPhases?.find((p) => p.engine === 'vllm' && p.pod === vllmPod);
    assert.ok(
      lp?.phases.some((p) => p.name === 'prefill'),
      JSON.stringify(a.llmPhases)
    );
    t.diagnostic(`${a.verdict} | ${pf.summary}`);
  });

  test('a burst beyond max_num_seqs: llm-vllm and its pod first, llm_queue naming waiting requests and KV usage', async (t) => {
    const from = Date.now();
    const rs = await Promise.all(
      Array.from({ length: BURST }, (_, i) => ask(`burst ${i} ${Math.random()}: explain KV caches`, 192))
    );
    const to = Date.now();
    assert.ok(
      rs.every((r) => r.status === 200),
      rs.map((r) => r.status).join(',')
    );
    // Prometheus saw the queue (what the evidence will name); one series per model the engine serves.
    const seen = await promValue(
      `max(max_over_time(vllm:num_requests_waiting{pod="${vllmPod}"}[${Math.ceil((Date.now() - from) / 1000) + 2}s]))`
    );
    assert.ok((seen ?? 0) >= 1, `vllm:num_requests_waiting peaked at ${seen} during the burst`);
    await chain.forceFlush();
    const traces = await waitFor('the burst traces', async () => {
      const x = await vllmTraces(from - 50, to + 50);
      return x.length >= BURST ? x : undefined;
    });
    // The slowest traces: those that waited longest for a slot.
    const ranks: string[] = [];
    let checked = 0;
    for (const d of traces.slice(0, 3)) {
      const a = await rca(d.traceId);
      const top = a.candidates[0];
      const brief = JSON.stringify(
        a.candidates.slice(0, 3).map((c) => [c.service, c.pod, c.evidence.map((e) => e.kind)])
      );
      ranks.push(`${top?.service}/${top?.pod} ${durationOf(d).toFixed(0)} ms: ${a.verdict}`);
      assert.equal(top?.service, 'llm-vllm', `${brief}; missing: ${a.missing.join(' | ')}`);
      assert.equal(top.pod, vllmPod);
      const q = top.evidence.find((e) => e.kind === 'llm_queue');
      assert.ok(q, brief);
      assert.ok(Number(q.waiting) >= 1, q.summary);
      assert.equal(typeof q.kvCacheUsage, 'number', q.summary);
      assert.match(q.summary, /behind [\d,]+ waiting requests, [\d,]+ running, KV cache [\d.]+ %/);
      assert.match(q.summary, /vllm:num_requests_waiting/);
      assert.match(q.summary, /vllm:kv_cache_usage_perc/);
      assert.match(
        a.verdict ?? '',
        new RegExp(`^${vllmPod} saturated: queued .* behind [\\d,]+ waiting requests, KV cache`)
      );
      const lp = a.llmPhases?.find((p) => p.engine === 'vllm' && p.pod === vllmPod);
      const qp = lp?.phases.find((p) => p.name === 'queue');
      assert.ok(qp && qp.durationMs > (qp.baselineMs ?? Infinity), JSON.stringify(lp));
      checked++;
    }
    assert.equal(checked, 3);
    t.diagnostic(ranks.join(' || '));
  });
});
