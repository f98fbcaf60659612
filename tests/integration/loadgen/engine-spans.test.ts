/**
 * The chain's LLM hops emit each engine's own request spans (contract/engines, read from the engines' source), and
 * the code that reads a real server reads them: `llmPhasesOf` splits vLLM's `llm_request` (gen_ai.latency.* in s),
 * TGI's `chat_completions` (Rust Duration text) and SGLang's request span (+ its `prefill_waiting` slice), each into
 * phases that agree with the hop's own timing. A burst beyond the engine's running-sequence limit shows as queue time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { llmPhasesOf, type LlmPhasesRead } from '../../../contract/engines/index';
import type { Span } from '../../../contract';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { DEFAULT_REPLICAS } from '../../../loadgen/src/chain/topology';
import { chat, otlpCollector, waitFor, type CollectedSpan } from './support';

const KINDS: Span['kind'][] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const toSpan = (s: CollectedSpan): Span => ({
  traceId: s.traceId,
  spanId: s.spanId,
  ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
  name: s.name,
  service: s.service,
  kind: KINDS[s.kind] ?? 'unspecified',
  startMs: s.startMs,
  endMs: s.endMs,
  status: s.status === 2 ? 'error' : 'unset',
  attributes: s.attributes as Span['attributes'],
  resource: s.resource as Span['resource'],
});

/** The engine spans of one hop's requests, read as a real server's would be. */
function phasesOfService(spans: CollectedSpan[], service: string): Array<{ p: LlmPhasesRead; hop: Span }> {
  const all = spans.map(toSpan);
  const byId = new Map(all.map((s) => [`${s.traceId}/${s.spanId}`, s]));
  const out: Array<{ p: LlmPhasesRead; hop: Span }> = [];
  for (const s of all) {
    if (s.service !== service) continue;
    const p = llmPhasesOf(
      s,
      all.filter((d) => d.traceId === s.traceId)
    );
    if (!p) continue;
    const hop = byId.get(`${s.traceId}/${s.parentSpanId}`);
    assert.ok(hop && hop.kind === 'server' && hop.service === service, 'the engine span is inside its hop span');
    out.push({ p, hop });
  }
  return out;
}

const total = (p: LlmPhasesRead): number => p.phases.reduce((n, x) => n + x.durationMs, 0);

describe('engine request spans from the chain, read by llmPhasesOf', () => {
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
      samplerAdaptive: false,
      cudaStandIn: false,
      replicas: { ...DEFAULT_REPLICAS, 'llm-vllm': 1, 'llm-tgi': 1, 'llm-sglang': 1 },
    });
  });
  after(async () => {
    await chain?.stop();
    await collector?.close();
  });

  for (const [backend, service, engine, names] of [
    ['vllm', 'llm-vllm', 'vllm', ['queue', 'prefill', 'decode']],
    ['tgi', 'llm-tgi', 'tgi', ['validation', 'queue', 'inference']],
    ['sglang', 'llm-sglang', 'sglang', ['queue', 'prefill', 'decode']],
  ] as const) {
    it(`${service}: its engine's span, split into ${names.join('/')}, inside the hop's own span`, async () => {
      for (const stream of [false, true]) {
        const r = await chat(
          chain.gatewayUrl,
          { stream, max_tokens: 16 },
          { 'x-hopscope-backend': backend, 'x-hopscope-route': 'direct' }
        );
        assert.equal(r.status, 200, r.text.slice(0, 200));
      }
      await chain.forceFlush();
      const got = await waitFor(`${service} engine spans`, async () => {
        const x = phasesOfService(collector.spans, service);
        return x.length >= 2 ? x : undefined;
      });
      for (const { p, hop } of got) {
        assert.equal(p.engine, engine, 'decided by the span shape');
        assert.deepEqual(
          p.phases.map((x) => x.name),
          names
        );
        assert.ok(p.phases.every((x) => x.durationMs >= 0));
        // The phases fit in the engine span, which fits in the hop span.
        assert.ok(total(p) <= p.durationMs + 1, `${total(p)} ≤ ${p.durationMs}`);
        assert.ok(p.startMs >= hop.startMs - 1 && p.startMs + p.durationMs <= hop.endMs + 1);
        if (engine !== 'tgi') {
          assert.ok(p.promptTokens! > 0 && p.completionTokens! > 0, 'usage read');
          // The engine's queue is the hop's own record of it (hopscope.llm.queue_ms, ms).
          const q = p.phases.find((x) => x.name === 'queue')!.durationMs;
          assert.ok(Math.abs(q - Number(hop.attributes['hopscope.llm.queue_ms'])) < 0.5, `${q} vs hop`);
        }
        if (engine === 'sglang') assert.match(p.source, /prefill_waiting slice/);
        if (engine === 'tgi') assert.match(p.source, /Duration text/);
      }
    });
  }

  it('a burst beyond max_num_seqs on vLLM: requests queue, and the llm_request spans say how long', async () => {
    const before = new Set(collector.spans.map((s) => s.spanId));
    const n = 48; // the simulated vLLM runs at most 32 sequences at once
    const rs = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        chat(
          chain.gatewayUrl,
          { max_tokens: 64, messages: [{ role: 'user', content: `burst ${i}: explain KV caches` }] },
          { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' }
        )
      )
    );
    assert.ok(rs.every((r) => r.status === 200));
    await chain.forceFlush();
    const got = await waitFor('the burst spans', async () => {
      const x = phasesOfService(
        collector.spans.filter((s) => !before.has(s.spanId)),
        'llm-vllm'
      );
      return x.length >= n ? x : undefined;
    });
    const queued = got.filter(({ p }) => p.phases[0].name === 'queue' && p.phases[0].durationMs > 0);
    // At least the sequences beyond the limit waited for a free slot.
    assert.ok(queued.length >= n - 32, `${queued.length} of ${n} queued`);
  });
});
