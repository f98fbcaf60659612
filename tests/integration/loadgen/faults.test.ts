/**
 * Each fault kind moves the numbers of the hop it hits (and its callers), not the others', and appears as an
 * annotation on GET /faults. Spans are read from an in-memory exporter on every hop; margins are wide on purpose.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FaultAnnotation } from '../../../contract/faults';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { tcpRetransmitAvailable } from '../../../loadgen/src/chain/faults/tcp-retransmit';
import { chat, median, otlpCollector } from './support';

const ms = (s: ReadableSpan) => s.duration[0] * 1000 + s.duration[1] / 1e6;
const service = (s: ReadableSpan) => String(s.resource.attributes['service.name']);

describe('faults', () => {
  let chain: RunningChain;
  const exporter = new InMemorySpanExporter();
  let collector: Awaited<ReturnType<typeof otlpCollector>>;

  before(async () => {
    collector = await otlpCollector();
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      otlpEndpoint: collector.url,
      otlpProtocol: 'http/json',
      vectorCacheHitRate: 0,
      samplerAdaptive: false,
      hopTimeoutMs: 1500,
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
  });
  after(async () => {
    await chain?.stop();
    await collector?.close();
  });

  const post = async (body: unknown) => {
    const r = await fetch(`${chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const del = (id: string) => fetch(`${chain.controlUrl}/faults/${id}`, { method: 'DELETE' });
  const startMs = (s: ReadableSpan) => s.startTime[0] * 1000 + s.startTime[1] / 1e6;
  const spansSince = (t: number, svc: string, kind = SpanKind.SERVER) =>
    exporter.getFinishedSpans().filter((s) => service(s) === svc && s.kind === kind && startMs(s) >= t);
  const burst = async (n: number, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const out = [];
    for (let i = 0; i < n; i++)
      out.push(
        await chat(
          chain.gatewayUrl,
          { messages: [{ role: 'user', content: `q${i} ${Math.random()}` }], ...body },
          headers
        )
      );
    return out;
  };
  /** Median server-span duration of each service over `n` requests sent now. */
  const measure = async (
    n: number,
    svcs: string[],
    body: Record<string, unknown> = {},
    headers: Record<string, string> = {}
  ) => {
    const t = Date.now();
    const res = await burst(n, body, headers);
    const out: Record<string, number> = {};
    for (const s of svcs) out[s] = median(spansSince(t, s).map(ms));
    return { res, med: out, t };
  };
  const annotated = async (id: string) => {
    const list = (await (await fetch(`${chain.controlUrl}/faults`)).json()) as unknown[];
    const a = list.map((x) => FaultAnnotation.parse(x)).find((x) => x.id === id);
    assert.ok(a, `fault ${id} published as an annotation`);
    return a!;
  };

  it('bad input: 400 with the allowed values; 409 when a kind does not fit this chain', async () => {
    const a = await post({ target: 'database', kind: 'latency' });
    assert.equal(a.status, 400);
    assert.match(
      a.body.error.message,
      /allowed: gateway, embedding, vector-cache, rag, llm-vllm, llm-tgi, llm-sglang, agent, tool/
    );
    const b = await post({ target: 'rag', kind: 'flood' });
    assert.equal(b.status, 400);
    assert.match(b.body.error.message, /allowed: latency, error, timeout, cpu_hog/);
    assert.equal((await post({ target: 'rag', kind: 'latency', magnitude: 1e9 })).status, 400);
    assert.equal(
      (await post({ target: 'rag', kind: 'error', magnitude: 2 })).body.error.code,
      'magnitude_out_of_range'
    );
    assert.equal((await post({ target: 'rag', kind: 'gpu_oom' })).status, 400);
    const tls = await post({ target: 'rag', kind: 'tls_slow_handshake' });
    assert.equal(tls.status, 409);
    assert.match(tls.body.error.message, /does not use TLS/);
    const bad = await fetch(`${chain.controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    assert.equal(bad.status, 400);
  });

  it('latency on rag: rag and its callers slow down by the magnitude, embedding does not', async () => {
    const before = await measure(4, ['rag', 'embedding', 'gateway']);
    const f = await post({ target: 'rag', kind: 'latency', magnitude: 300 });
    assert.equal(f.status, 201);
    const during = await measure(4, ['rag', 'vector-cache', 'embedding', 'gateway']);
    await del(f.body.id);
    assert.ok(during.med.rag - before.med.rag > 250, `rag ${before.med.rag} → ${during.med.rag}`);
    // Callers include the injected 300 ms (absolute bounds: a loaded machine only adds to them).
    assert.ok(during.med['vector-cache'] > 300, 'its caller vector-cache too');
    assert.ok(during.med.gateway > 300, `and the gateway: ${before.med.gateway} → ${during.med.gateway}`);
    assert.ok(
      during.med.embedding - before.med.embedding < 250,
      `embedding unaffected: ${before.med.embedding} → ${during.med.embedding}`
    );
    const a = await annotated(f.body.id);
    assert.equal(a.kind, 'latency');
    assert.equal(a.target, 'rag');
    assert.equal(a.active, false);
  });

  it('error on embedding: 5xx to the client, error spans and metrics on embedding', async () => {
    const f = await post({ target: 'embedding', kind: 'error' });
    const { res, t } = await measure(3, []);
    await del(f.body.id);
    assert.ok(
      res.every((r) => r.status === 502),
      res.map((r) => r.status).join()
    );
    const emb = spansSince(t, 'embedding');
    assert.ok(
      emb.length >= 3 &&
        emb.every((s) => s.status.code === SpanStatusCode.ERROR && s.attributes['error.type'] === 'injected_error')
    );
    assert.equal(spansSince(t, 'rag').length, 0, 'the request stopped at embedding');
    const metrics = await (await fetch(chain.hops.find((h) => h.hop === 'embedding')!.metricsUrl)).text();
    assert.match(metrics, /hopscope_requests_total\{route="\/v1\/embeddings",code="500"\} [1-9]/);
    assert.equal((await annotated(f.body.id)).kind, 'error');
  });

  it('error on llm-tgi and llm-vllm: the LLM servers count the failed requests in their own metrics', async () => {
    const scrape = async (hop: string): Promise<string> =>
      (
        await Promise.all(chain.hops.filter((h) => h.hop === hop).map(async (h) => (await fetch(h.metricsUrl)).text()))
      ).join('\n');
    const sum = (text: string, re: RegExp): number => [...text.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
    const tgiFail = /^tgi_request_failure\{err="generation"\} (\d+)/gm;
    const tgiCount = /^tgi_request_count (\d+)/gm;
    const vllmAbort = /^vllm:request_success_total\{[^}]*finished_reason="abort"[^}]*\} (\d+)/gm;
    const before = {
      fail: sum(await scrape('llm-tgi'), tgiFail),
      count: sum(await scrape('llm-tgi'), tgiCount),
      abort: sum(await scrape('llm-vllm'), vllmAbort),
    };
    const ft = await post({ target: 'llm-tgi', kind: 'error' });
    const fv = await post({ target: 'llm-vllm', kind: 'error' });
    await burst(2, {}, { 'x-hopscope-backend': 'tgi', 'x-hopscope-route': 'direct' });
    await burst(2, {}, { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' });
    await del(ft.body.id);
    await del(fv.body.id);
    const tgi = await scrape('llm-tgi');
    assert.ok(sum(tgi, tgiFail) >= before.fail + 2, `tgi_request_failure rose: ${before.fail} → ${sum(tgi, tgiFail)}`);
    assert.ok(sum(tgi, tgiCount) >= before.count + 2, 'a failed request still arrived: tgi_request_count rose');
    assert.ok(sum(await scrape('llm-vllm'), vllmAbort) >= before.abort + 2, 'vLLM counts them as aborted');
  });

  it('timeout on vector-cache: the caller gives up after its timeout and records error.type=timeout', async () => {
    const f = await post({ target: 'vector-cache', kind: 'timeout' });
    const { res, t } = await measure(2, []);
    await del(f.body.id);
    assert.ok(
      res.every((r) => r.status === 504),
      res.map((r) => `${r.status} ${r.text}`).join()
    );
    const client = spansSince(t, 'gateway', SpanKind.CLIENT).filter(
      (s) => s.attributes['peer.service'] === 'vector-cache'
    );
    assert.ok(
      client.length >= 2 && client.every((s) => s.attributes['error.type'] === 'timeout' && ms(s) >= 1450),
      client.map(ms).join()
    );
    assert.ok(spansSince(t, 'gateway').every((s) => s.attributes['error.type'] === 'timeout'));
  });

  it('cpu_hog on rag: real CPU burnt in that hop, its spans grow by the burn', async () => {
    const cpuOf = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
    let cpu0 = process.cpuUsage();
    const before = await measure(3, ['rag']);
    const cpuBefore = cpuOf(process.cpuUsage(cpu0));
    const f = await post({ target: 'rag', kind: 'cpu_hog', magnitude: 150 });
    cpu0 = process.cpuUsage();
    const during = await measure(3, ['rag', 'embedding']);
    const cpuDuring = cpuOf(process.cpuUsage(cpu0));
    await del(f.body.id);
    assert.ok(during.med.rag - before.med.rag > 120, `rag ${before.med.rag} → ${during.med.rag}`);
    // 3 × 150 ms of spinning; on a shared, saturated machine the spinning thread gets only part of a core.
    assert.ok(cpuDuring - cpuBefore > 150, `process CPU ${cpuBefore} → ${cpuDuring} ms`);
    assert.ok(during.med.embedding < 100);
    assert.equal((await annotated(f.body.id)).kind, 'cpu_hog');
  });

  it('tls_slow_handshake on tool: the agent→tool call slows by the handshake delay, the tool span does not', async () => {
    const before = await measure(
      2,
      [],
      { messages: [{ role: 'user', content: 'tls before' }] },
      { 'x-hopscope-route': 'agent' }
    );
    const f = await post({ target: 'tool', kind: 'tls_slow_handshake', magnitude: 400 });
    assert.equal(f.status, 201);
    const during = await measure(
      2,
      ['tool'],
      { messages: [{ role: 'user', content: 'tls during' }] },
      { 'x-hopscope-route': 'agent' }
    );
    await del(f.body.id);
    assert.ok(during.res.every((r) => r.status === 200));
    const callsBefore = spansSince(before.t, 'agent', SpanKind.CLIENT).filter(
      (s) => s.attributes['peer.service'] === 'tool' && startMs(s) < during.t
    );
    const callsDuring = spansSince(during.t, 'agent', SpanKind.CLIENT).filter(
      (s) => s.attributes['peer.service'] === 'tool'
    );
    assert.ok(median(callsDuring.map(ms)) >= 400, `${median(callsBefore.map(ms))} → ${median(callsDuring.map(ms))}`);
    assert.ok(median(callsBefore.map(ms)) < 400, 'without the fault the call is faster than the injected delay');
    assert.ok(
      during.med.tool < 200,
      `tool server span ${during.med.tool} ms: the delay is in the handshake, before the request`
    );
  });

  it('gpu_oom on llm-vllm: allocation failures in metrics and spans, fallback to the lighter model on the span', async () => {
    const f = await post({ target: 'llm-vllm', kind: 'gpu_oom', magnitude: 1 });
    const { res, t } = await measure(6, [], {}, { 'x-hopscope-backend': 'vllm' });
    const dcgm = await (await fetch(chain.dcgm[0].metricsUrl)).text();
    await del(f.body.id);
    assert.ok(res.filter((r) => r.status === 200).length >= 3, res.map((r) => r.status).join());
    const llm = spansSince(t, 'llm-vllm');
    const fell = llm.filter((s) => s.attributes['hopscope.fallback.model'] === 'hopscope-llama-1b');
    assert.ok(fell.length >= 3, `fallback spans: ${fell.length} of ${llm.length} llm-vllm spans`);
    for (const s of fell) {
      assert.equal(s.attributes['hopscope.fallback.from_model'], 'hopscope-llama-8b-v1');
      assert.ok(s.events.some((e) => e.name === 'gpu.allocation_failure'));
    }
    assert.ok(fell.some((s) => s.attributes['gen_ai.response.model'] === 'hopscope-llama-1b'));
    let failures = 0,
      aborts = 0;
    for (const h of chain.hops.filter((x) => x.hop === 'llm-vllm')) {
      const text = await (await fetch(h.metricsUrl)).text();
      failures += Number(/hopscope_llm_gpu_oom_total\{model="hopscope-llama-8b-v1"\} (\d+)/.exec(text)?.[1] ?? 0);
      aborts += Number(
        /vllm:request_success_total\{model_name="hopscope-llama-8b-v1",engine="0",finished_reason="abort"\} (\d+)/.exec(
          text
        )?.[1] ?? 0
      );
    }
    assert.ok(failures >= 6 && aborts >= 6, `failures ${failures}, aborts ${aborts}`);
    assert.match(dcgm, /DCGM_FI_DEV_FB_USED\{[^}]*pod="llm-vllm-[^"]+"\} 815\d\d/, 'framebuffer full on the vLLM GPUs');
    assert.equal((await annotated(f.body.id)).kind, 'gpu_oom');
  });

  it('kv_cache_thrash on llm-vllm: prefix-cache hits stop and sequences get preempted', async () => {
    const scrape = async () => {
      let hits = 0,
        pre = 0;
      for (const h of chain.hops.filter((x) => x.hop === 'llm-vllm')) {
        const text = await (await fetch(h.metricsUrl)).text();
        hits += Number(/vllm:prefix_cache_hits_total\{[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
        pre += Number(/vllm:num_preemptions_total\{[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
      }
      return { hits, pre };
    };
    await burst(4, {}, { 'x-hopscope-backend': 'vllm' });
    const s0 = await scrape();
    assert.ok(s0.hits > 0, 'the shared system prompt hits the prefix cache when healthy');
    // 0.5 % of the KV cache: two short prompts (direct route, ~50 tokens) fit, and their growth overflows it.
    const f = await post({ target: 'llm-vllm', kind: 'kv_cache_thrash', magnitude: 0.005 });
    const res = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        chat(
          chain.gatewayUrl,
          { max_tokens: 100, messages: [{ role: 'user', content: `thrash ${i}` }] },
          { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' }
        )
      )
    );
    const s1 = await scrape();
    await del(f.body.id);
    // Thrashing makes sequences wait and recompute; with this test's 700 ms hop timeout some may time out.
    assert.ok(res.filter((r) => r.status === 200).length >= 6, res.map((r) => r.status).join());
    assert.equal(s1.hits, s0.hits, 'no prefix-cache hits while thrashing');
    assert.ok(s1.pre > s0.pre, `preemptions ${s0.pre} → ${s1.pre}`);
    assert.equal((await annotated(f.body.id)).kind, 'kv_cache_thrash');
  });

  it('tcp_retransmit on rag: real dropped packets (nftables) slow the calls to rag, or a clear "unavailable here"', async () => {
    const can = await tcpRetransmitAvailable();
    const f = await post({ target: 'rag', kind: 'tcp_retransmit', magnitude: 50 });
    if (can !== true) {
      assert.equal(f.status, 409);
      assert.match(f.body.error.message, /unavailable here: /);
      return;
    }
    assert.equal(f.status, 201, JSON.stringify(f.body));
    const table = /nft table (\S+)/.exec(f.body.note)![1];
    assert.ok(execFileSync('nft', ['list', 'tables']).toString().includes(table));
    const t = Date.now();
    const res = await burst(10);
    await del(f.body.id);
    // A dropped SYN costs a 1 s retransmission: some calls may exceed this test's 1.5 s hop timeout (504), which is the fault's real effect.
    assert.ok(
      res.every((r) => r.status === 200 || r.status === 504),
      res.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join('\n')
    );
    const calls = spansSince(t, 'vector-cache', SpanKind.CLIENT)
      .filter((s) => s.attributes['peer.service'] === 'rag')
      .map(ms)
      .sort((a, b) => a - b);
    // A lost segment costs a loss probe or an RTO (tens to hundreds of ms on loopback) on top of a ~1 ms call.
    assert.ok(calls[calls.length - 1] > 60, `slowest call to rag ${calls.join(', ')} ms`);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(
      !execFileSync('nft', ['list', 'tables']).toString().includes(table),
      'the nft table is removed when the fault ends'
    );
    const a = await annotated(f.body.id);
    assert.match(a.note ?? '', /[1-9]\d* packets dropped/);
  });
});
