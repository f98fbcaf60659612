import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KernelEvent, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { rng, syntheticHealthy, syntheticTrace } from '../../support/rca/synthetic';
import { TRACE, sp } from './helpers';

const ASKED = 'llama-3-8b';
const LIGHT = 'llama-3-1b';

/**
 * The chain's rag route as the real chain records it: gateway → rag, then gateway → llm-vllm (chat). The LLM server
 * span says which model answered; the gateway copies `gen_ai.response.model` onto its own spans.
 */
function req(
  seed: number,
  o: {
    fallback?: 'explicit' | 'models-only';
    served?: string;
    ragSelf?: number;
    noLlmSpan?: boolean;
    ragGap?: number;
    llmGap?: number;
  } = {}
): Span[] {
  const r = rng(seed);
  const j = (x: number): number => x * (0.95 + 0.1 * r());
  const served = o.fallback ? (o.served ?? LIGHT) : ASKED;
  const models = { 'gen_ai.request.model': ASKED, 'gen_ai.response.model': served };
  const llmAttrs: Span['attributes'] = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'vllm', ...models };
  if (o.fallback === 'explicit') {
    Object.assign(llmAttrs, {
      'hopscope.gpu.oom': true,
      'hopscope.fallback.reason': 'gpu_oom',
      'hopscope.fallback.from_model': ASKED,
      'hopscope.fallback.model': served,
    });
  }
  const ragEnd = 2 + 1 + (o.ragSelf ?? j(10));
  const llmStart = ragEnd + 1;
  const llmEnd = llmStart + 1 + j(40);
  const pod = (service: string) => ({ resource: { 'service.name': service, 'k8s.pod.name': `${service}-0` } });
  const spans = [
    sp('1', undefined, 'gateway', 'POST /v1/chat/completions', 'server', 0, llmEnd + 1, {
      attributes: { ...models },
      ...pod('gateway'),
    }),
    sp('2', '1', 'gateway', 'POST /retrieve', 'client', 2, ragEnd),
    sp('3', '2', 'rag', 'retrieve', 'server', 2.5 + (o.ragGap ?? 0), ragEnd - 0.5),
    sp('4', '1', 'gateway', `chat ${ASKED}`, 'client', llmStart, llmEnd, {
      attributes: { ...models, 'peer.service': 'llm-vllm' },
    }),
    sp('5', '4', 'llm-vllm', `chat ${ASKED}`, 'server', llmStart + 0.5 + (o.llmGap ?? 0), llmEnd - 0.5, {
      attributes: llmAttrs,
    }),
  ];
  return o.noLlmSpan ? spans.filter((s) => s.service !== 'llm-vllm') : spans;
}
const baseline = buildBaseline(Array.from({ length: 30 }, (_, i) => req(i + 1)));

const gpuFail = (pod: string, ts: number): KernelEvent => ({
  ts,
  type: 'gpu_alloc_fail',
  pid: 4242,
  comm: 'python3',
  pod,
  namespace: 'hopscope',
  node: 'gpu-node-0',
  detail: { bytes: 2147483648 },
  mode: 'replay',
});

test('a fallback model answer is a degraded request: the LLM pod that fell back ranks first, with both models named', () => {
  const spans = req(100, { fallback: 'explicit' });
  const a = rankTrace({ spans, baseline });
  RcaAnswer.parse(a);
  const top = a.candidates[0];
  assert.equal(top.service, 'llm-vllm', JSON.stringify(a.candidates.map((c) => [c.service, c.score])));
  assert.equal(top.pod, 'llm-vllm-0');
  assert.equal(top.spanId, spans[4].spanId);
  const fb = top.evidence.find((e) => e.kind === 'model_fallback');
  assert.ok(fb, JSON.stringify(top.evidence));
  assert.equal(fb.requestedModel, ASKED);
  assert.equal(fb.servedModel, LIGHT);
  assert.ok(
    fb.summary.includes(ASKED) && fb.summary.includes(LIGHT) && /GPU out-of-memory/.test(fb.summary),
    fb.summary
  );
  // The gateway only relays the answer: no fallback evidence there, although its spans show both models too.
  for (const c of a.candidates.filter((x) => x.service === 'gateway'))
    assert.ok(c.evidence.every((e) => e.kind !== 'model_fallback'));
  assert.match(a.anchor!.reason, /fell back/);
  // The same trace answered by the asked model is healthy.
  const calm = rankTrace({ spans: req(100), baseline });
  assert.ok(
    calm.candidates.every((c) => c.score < 0.1),
    JSON.stringify(calm.candidates.map((c) => [c.service, c.score]))
  );
});

test('the GPU allocation failures on that pod join as evidence; those on another pod do not', () => {
  const spans = req(101, { fallback: 'explicit' });
  const llm = spans[4];
  const mid = (llm.startMs + llm.endMs) / 2;
  const events = [gpuFail('llm-vllm-0', mid), gpuFail('llm-vllm-0', mid + 1), gpuFail('llm-vllm-1', mid)];
  const without = rankTrace({ spans, baseline });
  const withK = rankTrace({ spans, baseline, kernelEvents: events });
  assert.equal(withK.candidates[0].pod, 'llm-vllm-0');
  const k = withK.candidates[0].evidence.find((e) => e.kind === 'kernel:gpu_alloc_fail');
  assert.ok(k, JSON.stringify(withK.candidates[0].evidence));
  assert.equal(k.count, 2);
  assert.ok(
    withK.candidates[0].score > without.candidates[0].score,
    `${withK.candidates[0].score} vs ${without.candidates[0].score}`
  );
  assert.ok(withK.candidates.every((c) => c.pod !== 'llm-vllm-1'));
});

test('request ≠ response model alone (no hopscope.* attributes) is a fallback; a dated alias of the asked model is not', () => {
  const a = rankTrace({ spans: req(102, { fallback: 'models-only' }), baseline });
  assert.equal(a.candidates[0].service, 'llm-vllm');
  const fb = a.candidates[0].evidence.find((e) => e.kind === 'model_fallback');
  assert.ok(
    fb && /gen_ai.request.model ≠ gen_ai.response.model/.test(fb.summary),
    JSON.stringify(a.candidates[0].evidence)
  );
  const alias = rankTrace({ spans: req(102, { fallback: 'models-only', served: `${ASKED}-2024-08-06` }), baseline });
  assert.ok(alias.candidates.every((c) => c.evidence.every((e) => e.kind !== 'model_fallback')));
  assert.ok(alias.candidates.every((c) => c.score < 0.1));
});

test('with the LLM server span missing, the fallback the gateway saw is booked on the callee, not on the gateway', () => {
  const a = rankTrace({ spans: req(103, { fallback: 'models-only', noLlmSpan: true }), baseline });
  const top = a.candidates[0];
  assert.equal(top.service, 'llm-vllm', JSON.stringify(a.candidates.map((c) => [c.service, c.pod, c.score])));
  assert.ok(top.evidence.some((e) => e.kind === 'model_fallback'));
});

test('a breach in another branch hides neither: the anchor frames the breach and the degraded answer', () => {
  const config = { sloMs: { rag: 12 } };
  const spans = req(104, { fallback: 'explicit', ragSelf: 14 });
  const a = rankTrace({ spans, baseline, config });
  assert.equal(a.anchor!.spanId, spans[0].spanId, a.anchor!.reason);
  assert.match(a.anchor!.reason, /breached their SLO or served a degraded answer/);
  assert.equal(a.candidates[0].service, 'llm-vllm', JSON.stringify(a.candidates.map((c) => [c.service, c.score])));
  assert.ok(
    a.candidates.find((c) => c.service === 'rag')?.evidence.some((e) => e.kind === 'self_time'),
    'the slow rag is ranked too'
  );
  // Without the fallback the breach alone is the anchor, and rag the answer.
  const plain = req(104, { ragSelf: 14 });
  const b = rankTrace({ spans: plain, baseline, config });
  assert.equal(b.anchor!.spanId, plain[2].spanId);
  assert.equal(b.candidates[0].service, 'rag');
});

test('a call into a fallback is slow because of the fallback: no witness that the caller is slow on its client side', () => {
  // Both calls slow to arrive: without a fallback the gateway is the slow caller (its calls to 2 services)…
  const plain = rankTrace({ spans: req(105, { ragGap: 8, llmGap: 15 }), baseline });
  assert.equal(plain.candidates[0].service, 'gateway');
  assert.ok(plain.candidates[0].evidence.some((e) => e.kind === 'client_side_delay'));
  // …with the LLM's answer degraded, its call's delay is its own, and rag's is rag's.
  const fb = rankTrace({ spans: req(105, { ragGap: 8, llmGap: 15, fallback: 'explicit' }), baseline });
  assert.equal(fb.candidates[0].service, 'llm-vllm', JSON.stringify(fb.candidates.map((c) => [c.service, c.score])));
  assert.ok(fb.candidates[0].evidence.some((e) => e.kind === 'client_server_gap'));
  assert.ok(fb.candidates.every((c) => c.evidence.every((e) => e.kind !== 'client_side_delay')));
});

/** The chain copies the served model up: every ancestor of the LLM span shows the asked and the served model. */
function asTheChainRecordsIt(spans: Span[]): Span[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const out = spans.map((s) => ({ ...s, attributes: { ...s.attributes } }));
  const copy = new Map(out.map((s) => [s.spanId, s]));
  for (const s of spans) {
    const served = s.attributes['hopscope.fallback.model'];
    if (typeof served !== 'string') continue;
    copy.get(s.spanId)!.attributes['gen_ai.response.model'] = served;
    for (
      let p = s.parentSpanId && byId.get(s.parentSpanId);
      p;
      p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined
    ) {
      Object.assign(copy.get(p.spanId)!.attributes, { 'gen_ai.request.model': ASKED, 'gen_ai.response.model': served });
    }
  }
  return out;
}

test('synthetic chain, gpu_oom on either backend: the 5 slowest of 20 faulted traces all rank that backend first, with and without kernel events', () => {
  const healthy = buildBaseline(syntheticHealthy(61, 80));
  for (const hop of ['llm-vllm', 'llm-tgi'] as const) {
    const traces = Array.from({ length: 20 }, (_, i) =>
      syntheticTrace({ seed: 7000 + i, fault: { hop, kind: 'gpu_oom' } })
    ).map((t) => ({ ...t, spans: asTheChainRecordsIt(t.spans) }));
    const dur = (t: { spans: Span[] }): number =>
      Math.max(...t.spans.map((s) => s.endMs)) - Math.min(...t.spans.map((s) => s.startMs));
    const slowest = [...traces].sort((x, y) => dur(y) - dur(x)).slice(0, 5);
    for (const tr of slowest) {
      for (const kernelEvents of [tr.kernelEvents, undefined]) {
        const a = rankTrace({ spans: tr.spans, baseline: healthy, kernelEvents });
        const top = a.candidates[0];
        const label = `${hop} ${tr.traceId} kernel=${kernelEvents !== undefined}: ${JSON.stringify(a.candidates.slice(0, 3).map((c) => [c.service, c.pod, c.score]))}`;
        assert.equal(top.pod, tr.truth!.pod, label);
        const kinds = top.evidence.map((e) => e.kind);
        assert.ok(kinds.includes('model_fallback'), `${label} ${kinds}`);
        if (kernelEvents) assert.ok(kinds.includes('kernel:gpu_alloc_fail'), `${label} ${kinds}`);
        assert.ok(
          a.candidates
            .filter((c) => c.service === 'gateway')
            .every((c) => c.evidence.every((e) => e.kind !== 'model_fallback')),
          label
        );
      }
    }
  }
});

test('a window of fallback traces ranks the backend that fell back, one model_fallback line per trace counted', () => {
  const traces = [1, 2, 3].map((k) =>
    req(200 + k, { fallback: 'explicit' }).map((s) => ({ ...s, traceId: String(k).repeat(32) }))
  );
  const w = rankWindow({ traces: [...traces, req(210).map((s) => ({ ...s, traceId: TRACE }))], baseline });
  assert.equal(w.candidates[0].service, 'llm-vllm');
  assert.ok(
    w.candidates[0].evidence.some((e) => e.kind === 'model_fallback' && e.traces === 3),
    JSON.stringify(w.candidates[0].evidence)
  );
});
