/**
 * Spans from every hop reach an OTLP/HTTP endpoint with correct parent links across hops (W3C traceparent), GenAI
 * attributes, per-pod k8s resource attributes and the load-test baggage; the sampler keeps errored traces whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { runLoad } from '../../../loadgen/src/load/driver';
import { chat, otlpCollector, waitFor, type CollectedSpan } from './support';

const SERVER = 2,
  CLIENT = 3;

function byTrace(spans: CollectedSpan[]): Map<string, CollectedSpan[]> {
  const m = new Map<string, CollectedSpan[]>();
  for (const s of spans) (m.get(s.traceId) ?? m.set(s.traceId, []).get(s.traceId)!).push(s);
  return m;
}

function checkLinks(trace: CollectedSpan[]): CollectedSpan {
  const ids = new Map(trace.map((s) => [s.spanId, s]));
  const roots = trace.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
  assert.equal(roots.length, 1, `one root, got ${roots.map((r) => `${r.service}:${r.name}`)}`);
  for (const s of trace) {
    if (s === roots[0]) continue;
    const parent = ids.get(s.parentSpanId!)!;
    assert.ok(parent, `${s.service}:${s.name} has its parent in the trace`);
    assert.ok(
      parent.startMs <= s.startMs + 1 && s.endMs <= parent.endMs + 5,
      `${s.service}:${s.name} lies inside its parent ${parent.service}:${parent.name}`
    );
    if (s.kind === SERVER && s.service !== parent.service) {
      // Cross-hop link: a server span's parent is the caller's client span naming this hop.
      assert.equal(parent.kind, CLIENT, `${s.service} server span's parent is a client span`);
      assert.equal(parent.attributes['peer.service'], s.service);
      assert.equal(parent.attributes['hopscope.peer.pod'], s.resource['k8s.pod.name']);
    }
  }
  return roots[0];
}

describe('traces across the chain', () => {
  let chain: RunningChain;
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
    });
  });
  after(async () => {
    await chain?.stop();
    await collector?.close();
  });

  it('a RAG request: gateway → embedding, vector-cache → rag, llm — all linked, resource per pod, GenAI attributes', async () => {
    const r = await chat(
      chain.gatewayUrl,
      { stream: true },
      { baggage: 'hopscope.run_id=run-traces,hopscope.load_test=true', 'x-hopscope-backend': 'vllm' }
    );
    assert.equal(r.status, 200);
    await chain.forceFlush();
    const trace = await waitFor('rag trace', async () =>
      [...byTrace(collector.spans).values()].find(
        (t) =>
          t.some((s) => s.attributes['hopscope.run_id'] === 'run-traces') &&
          t.some((s) => s.service === 'llm-vllm' && s.kind === SERVER)
      )
    );
    const root = checkLinks(trace);
    assert.equal(root.service, 'gateway');
    assert.equal(root.name, 'POST /v1/chat/completions');
    const services = new Set(trace.map((s) => s.service));
    for (const svc of ['gateway', 'embedding', 'vector-cache', 'rag', 'llm-vllm'])
      assert.ok(services.has(svc), `${svc} in ${[...services]}`);
    const rag = trace.find((s) => s.service === 'rag' && s.kind === SERVER)!;
    assert.equal(
      trace.find((s) => s.spanId === rag.parentSpanId)!.service,
      'vector-cache',
      'a cache miss goes to rag from vector-cache'
    );
    for (const s of trace) {
      assert.match(String(s.resource['k8s.pod.name']), new RegExp(`^${s.service}-[0-9a-f]{5}-\\d$`));
      assert.ok(s.resource['k8s.node.name'] && s.resource['k8s.namespace.name'] === 'hopscope-demo');
    }
    // The hop's HTTP server span; vLLM's own `llm_request` SERVER span (contract/engines) runs inside it.
    const llm = trace.find((s) => s.service === 'llm-vllm' && s.kind === SERVER && s.name !== 'llm_request')!;
    assert.equal(llm.name, 'chat hopscope-llama-8b-v1');
    const engineSpan = trace.find((s) => s.service === 'llm-vllm' && s.name === 'llm_request');
    assert.equal(engineSpan?.parentSpanId, llm.spanId, "the engine's span inside the hop's");
    assert.equal(llm.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(llm.attributes['gen_ai.request.model'], 'hopscope-llama-8b-v1');
    assert.ok(Number(llm.attributes['gen_ai.usage.input_tokens']) > 20);
    assert.ok(Number(llm.attributes['gen_ai.usage.output_tokens']) >= 1);
    const emb = trace.find((s) => s.service === 'embedding' && s.kind === SERVER)!;
    assert.equal(emb.attributes['gen_ai.operation.name'], 'embeddings');
    assert.ok(
      trace
        // The hops' server spans; vLLM's own llm_request carries only what vLLM writes (no baggage).
        .filter((s) => s.kind === SERVER && s.name !== 'llm_request')
        .every((s) => s.attributes['hopscope.run_id'] === 'run-traces' && s.attributes['hopscope.load_test'] === true),
      'baggage reaches every hop'
    );
  });

  it('an agent request: gateway → agent → llm (plan), tool over TLS, llm (answer)', async () => {
    const r = await chat(
      chain.gatewayUrl,
      { stream: false, messages: [{ role: 'user', content: 'agent-trace: find the latest news' }] },
      { 'x-hopscope-route': 'agent', 'x-hopscope-backend': 'tgi' }
    );
    assert.equal(r.status, 200, r.text);
    await chain.forceFlush();
    const trace = await waitFor('agent trace', async () =>
      [...byTrace(collector.spans).values()].find(
        (t) => t.some((s) => s.service === 'tool') && t.some((s) => s.service === 'agent')
      )
    );
    checkLinks(trace);
    const agent = trace.find((s) => s.service === 'agent' && s.kind === SERVER)!;
    assert.equal(agent.name, 'invoke_agent hopscope-research-agent');
    assert.ok(trace.filter((s) => s.service === 'llm-tgi' && s.kind === SERVER).length >= 2, 'plan and answer calls');
    const tool = trace.find((s) => s.service === 'tool' && s.kind === SERVER)!;
    assert.equal(tool.attributes['url.scheme'], 'https', 'the tool link is real TLS');
    const exec = trace.find((s) => s.name === 'execute_tool web_search')!;
    assert.equal(exec.attributes['gen_ai.tool.name'], 'web_search');
  });

  it('hopscope-load against the chain: streaming run, every request traced under its run id', async () => {
    const sum = await runLoad({
      target: chain.gatewayUrl,
      path: '/v1/chat/completions',
      method: 'POST',
      profile: { kind: 'constant', rps: 8, durationS: 1, arrivals: 'uniform' },
      stream: true,
      models: ['hopscope-llama-8b-v1', 'hopscope-llama-8b-v2'],
      backend: 'mix',
      agentRatio: 0.25,
      maxTokens: 12,
      seed: 5,
      runId: 'run-cli-chain',
      timeoutMs: 10_000,
      connections: 16,
      maxInFlight: 100,
      slo: { e2eMs: 10_000 },
      traceparent: false,
    });
    assert.equal(sum.sent, 8);
    assert.equal(sum.succeeded, 8, JSON.stringify(sum.errors));
    assert.equal(sum.ttftMs.count, 8);
    assert.ok(sum.tpotMs.count > 0 && sum.outputTokens >= 8);
    assert.ok(
      Object.keys(sum.byModel).some((k) => k.startsWith('tgi/')) &&
        Object.keys(sum.byModel).some((k) => k.startsWith('vllm/'))
    );
    await chain.forceFlush();
    const roots = await waitFor('8 traced runs', async () => {
      const r = collector.spans.filter(
        (s) => s.service === 'gateway' && s.kind === SERVER && s.attributes['hopscope.run_id'] === 'run-cli-chain'
      );
      return r.length === 8 ? r : undefined;
    });
    assert.ok(roots.every((r) => r.attributes['hopscope.load_test'] === true));
  });

  it("continues a caller's W3C traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const r = await chat(
      chain.gatewayUrl,
      {},
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-hopscope-route': 'direct' }
    );
    assert.equal(r.status, 200);
    await chain.forceFlush();
    const root = await waitFor('continued trace', async () =>
      collector.spans.find((s) => s.traceId === traceId && s.service === 'gateway' && s.kind === SERVER)
    );
    assert.equal(root.parentSpanId, '00f067aa0ba902b7');
  });
});

describe('adaptive sampling keeps errors', () => {
  it('at a 1% head rate, healthy traces are mostly dropped and every errored trace is exported whole', async () => {
    const collector = await otlpCollector();
    const chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      otlpEndpoint: collector.url,
      otlpProtocol: 'http/json',
      vectorCacheHitRate: 0,
      samplerBaseRate: 0.01,
      samplerMinRate: 0.01,
    });
    try {
      for (let i = 0; i < 10; i++)
        assert.equal(
          (await chat(chain.gatewayUrl, { messages: [{ role: 'user', content: `healthy ${i}` }] })).status,
          200
        );
      await chain.forceFlush();
      const healthyTraces = new Set(collector.spans.map((s) => s.traceId)).size;
      assert.ok(healthyTraces <= 2, `${healthyTraces} healthy traces exported at 1%`);
      const f = await (
        await fetch(`${chain.controlUrl}/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ target: 'rag', kind: 'error' }),
        })
      ).json();
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await chat(chain.gatewayUrl, { messages: [{ role: 'user', content: `broken ${i}` }] })).status,
          502
        );
      await chain.forceFlush();
      const errored = [...byTrace(collector.spans).values()].filter((t) =>
        t.some((s) => s.service === 'rag' && s.status === 2)
      );
      assert.equal(errored.length, 5, 'every errored trace kept');
      for (const t of errored) {
        checkLinks(t);
        const svcs = new Set(t.map((s) => s.service));
        for (const svc of ['gateway', 'embedding', 'vector-cache', 'rag'])
          assert.ok(svcs.has(svc), `${svc} kept in the errored trace`);
        assert.equal(t.find((s) => s.service === 'rag')!.attributes['hopscope.fault.id'], f.id);
      }
    } finally {
      await chain.stop();
      await collector.close();
    }
  });
});
