/**
 * The `LLM phases` pass on inference server spans shaped as vLLM and TGI write them (tests/support/rca/engine-spans.ts,
 * derived from their source at the commits named there): the phase above its baseline is evidence on the server's
 * hop and pod, with the engine state the caller gave; the verdict is the sentence a person acts on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EngineState, llmPhasesOf, parseTgiDuration, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankTrace, rankWindow } from '../../../backend-proxy/src/rca';
import { engineTrace, healthyCall, rustDuration } from '../../support/rca/engine-spans';

const vllm = (seed: number, call = healthyCall(seed)) =>
  engineTrace({ seed, engine: 'vllm', service: 'inference-a', pod: 'llm-vllm-1', call });
const tgi = (seed: number, call = healthyCall(seed)) =>
  engineTrace({ seed, engine: 'tgi', service: 'textgen', pod: 'textgen-0', call });

const vBase = buildBaseline(Array.from({ length: 30 }, (_, i) => vllm(i + 1)));
const tBase = buildBaseline(Array.from({ length: 30 }, (_, i) => tgi(i + 1)));

const saturatedState: EngineState = {
  waiting: 37,
  running: 32,
  kvCacheUsage: 0.98,
  preemptionsPerMin: 12,
  provenance: [
    { figure: 'waiting', metric: 'vllm:num_requests_waiting', instantMs: 1_700_000_500_000, scrapeIntervalS: 15 },
    { figure: 'kvCacheUsage', metric: 'vllm:gpu_cache_usage_perc', instantMs: 1_700_000_500_000, scrapeIntervalS: 15 },
    { figure: 'preemptionsPerMin', metric: 'vllm:num_preemptions_total', instantMs: 1_700_000_500_000 },
  ],
};

describe('LLM phases', () => {
  it("reads TGI's Rust durations", () => {
    assert.equal(parseTgiDuration('12.3ms'), 12.3);
    assert.equal(parseTgiDuration('850µs'), 0.85);
    assert.equal(parseTgiDuration('1.2s'), 1200);
    assert.equal(parseTgiDuration('731ns'), 0.000731);
    assert.equal(parseTgiDuration('12 parsecs'), undefined);
    for (const ms of [0.85, 12.3, 1200, 2500]) assert.equal(parseTgiDuration(rustDuration(ms)), ms);
  });

  it('splits vLLM and TGI spans from any service name; other spans are not read', () => {
    const v = llmPhasesOf(vllm(1).find((s) => s.name === 'llm_request')!)!;
    assert.equal(v.engine, 'vllm');
    assert.equal(v.service, 'inference-a');
    assert.equal(v.pod, 'llm-vllm-1');
    assert.deepEqual(
      v.phases.map((p) => p.name),
      ['queue', 'prefill', 'decode']
    );
    assert.ok(v.promptTokens! > 500);
    const t = llmPhasesOf(tgi(1).find((s) => s.name === 'generate')!)!;
    assert.equal(t.engine, 'tgi');
    assert.deepEqual(
      t.phases.map((p) => p.name),
      ['validation', 'queue', 'inference']
    );
    for (const s of [...vllm(2), ...tgi(2)].filter((s) => s.name !== 'llm_request' && s.name !== 'generate'))
      assert.equal(llmPhasesOf(s), undefined, s.name);
  });

  it('a saturated vLLM: llm_queue on its service and pod naming waiting requests and KV usage; the verdict says so', () => {
    const spans = vllm(100, { ...healthyCall(100), queueMs: 2800 });
    const ans = rankTrace({ spans, baseline: vBase, engineState: () => saturatedState });
    RcaAnswer.parse(ans);
    const top = ans.candidates[0];
    assert.equal(top.service, 'inference-a');
    assert.equal(top.pod, 'llm-vllm-1');
    const q = top.evidence.find((e) => e.kind === 'llm_queue')!;
    assert.ok(q, JSON.stringify(top.evidence));
    assert.equal(q.waiting, 37);
    assert.equal(q.kvCacheUsage, 0.98);
    assert.match(q.summary, /behind 37 waiting requests/);
    assert.match(q.summary, /vllm:gpu_cache_usage_perc/);
    assert.ok(top.evidence.some((e) => e.kind === 'llm_preemption'));
    assert.ok(!top.evidence.some((e) => e.kind === 'llm_prefill' || e.kind === 'llm_decode'));
    assert.match(
      ans.verdict!,
      /^llm-vllm-1 saturated: queued 2\.8 s \(usually 4\d ms\) behind 37 waiting requests, KV cache 98 %, 12 preemptions\/min$/
    );
    const lp = ans.llmPhases![0];
    assert.equal(lp.engineState?.waiting, 37);
    assert.ok(lp.phases.every((p) => p.baselineMs !== undefined));
  });

  it('without engine state the queue is still read from the span, and nothing is guessed', () => {
    const spans = vllm(101, { ...healthyCall(101), queueMs: 2800 });
    const ans = rankTrace({ spans, baseline: vBase });
    const q = ans.candidates[0].evidence.find((e) => e.kind === 'llm_queue')!;
    assert.equal(q.waiting, undefined);
    assert.doesNotMatch(ans.verdict!, /waiting requests|KV cache \d/);
    assert.match(ans.verdict!, /queued 2\.8 s/);
    assert.ok(!ans.candidates[0].evidence.some((e) => e.kind === 'llm_preemption'));
  });

  it('a long prompt: llm_prefill naming prompt tokens against the usual', () => {
    const spans = vllm(102, { ...healthyCall(102), prefillMs: 1900, promptTokens: 7900 });
    const ans = rankTrace({ spans, baseline: vBase });
    const top = ans.candidates[0];
    assert.equal(top.service, 'inference-a');
    const p = top.evidence.find((e) => e.kind === 'llm_prefill')!;
    assert.equal(p.promptTokens, 7900);
    assert.ok(Math.abs((p.baselinePromptTokens as number) - 600) < 60);
    assert.match(ans.verdict!, /^long prompt at llm-vllm-1: prefill 1\.9 s for 7,900 prompt tokens \(usually \d{3}\)$/);
  });

  it('a slow decode', () => {
    const ans = rankTrace({ spans: vllm(103, { ...healthyCall(103), decodeMs: 4000 }), baseline: vBase });
    assert.ok(ans.candidates[0].evidence.some((e) => e.kind === 'llm_decode'));
    assert.match(ans.verdict!, /^llm-vllm-1 slow decode: 4\.0 s/);
  });

  it('TGI: a queue in its router span is llm_queue on its hop', () => {
    const ans = rankTrace({ spans: tgi(104, { ...healthyCall(104), queueMs: 2500 }), baseline: tBase });
    RcaAnswer.parse(ans);
    const top = ans.candidates[0];
    assert.equal(top.service, 'textgen');
    assert.equal(top.pod, 'textgen-0');
    assert.ok(top.evidence.some((e) => e.kind === 'llm_queue'));
    assert.equal(ans.llmPhases?.[0].engine, 'tgi');
    assert.match(ans.verdict!, /^textgen-0 saturated: queued 2\.5 s/);
  });

  it('a healthy call is no evidence; a non-LLM cause gets its own verdict', () => {
    const ok = rankTrace({ spans: vllm(105), baseline: vBase });
    assert.ok(ok.candidates.every((c) => c.evidence.every((e) => !e.kind.startsWith('llm_'))));
    assert.equal(ok.llmPhases?.length, 1);
    const slowGw = vllm(106).map((s) =>
      s.kind === 'server' && s.service === 'gateway' ? { ...s, endMs: s.endMs + 900 } : s
    );
    const ans = rankTrace({ spans: slowGw, baseline: vBase });
    assert.equal(ans.candidates[0].service, 'gateway');
    assert.match(ans.verdict!, /^gateway-0: gateway "POST \/v1\/chat" spent/);
  });

  it('a window of saturated traces: the same evidence summed, the verdict with its share, the worst spans split', () => {
    const traces = [
      ...Array.from({ length: 8 }, (_, i) => vllm(200 + i, { ...healthyCall(200 + i), queueMs: 2000 + 100 * i })),
      ...Array.from({ length: 12 }, (_, i) => vllm(300 + i)),
    ];
    const w = rankWindow({ traces, baseline: vBase, engineState: () => saturatedState });
    RcaAnswer.parse(w);
    assert.equal(w.candidates[0].service, 'inference-a');
    assert.ok(w.candidates[0].evidence.some((e) => e.kind === 'llm_queue' && e.traces === 8));
    assert.match(w.verdict!, /^llm-vllm-1 saturated in 8 of 20 traces: queued 2\.7 s .* behind 37 waiting requests/);
    assert.equal(w.llmPhases!.length, 5);
    assert.ok(w.llmPhases![0].phases[0].durationMs >= 2700);
  });
});

describe('LLM phases on SGLang', () => {
  // tests/fixtures/engines/sglang-request.json: derived from SGLang's source at the commits it names (the request's root
  // span and its prefill_waiting slice). Healthy copies wait 40 ms instead of its 900 ms.
  const f = JSON.parse(
    readFileSync(join(import.meta.dirname, '../../fixtures/engines/sglang-request.json'), 'utf8')
  ) as { span: Span; descendants: Span[] };
  const copy = (k: number, queueMs: number): Span[] => {
    const traceId = k.toString(16).padStart(32, '0');
    const shift = k * 10_000;
    const w = f.descendants.find((d) => d.name === 'prefill_waiting')!;
    const prefillS = Number(f.span.attributes['gen_ai.latency.time_in_model_prefill']) - 0.9 + queueMs / 1000;
    const at = (s: Span): Span => ({ ...s, traceId, startMs: s.startMs + shift, endMs: s.endMs + shift });
    return [
      at({ ...f.span, attributes: { ...f.span.attributes, 'gen_ai.latency.time_in_model_prefill': prefillS } }),
      ...f.descendants.map((d) => (d === w ? at({ ...d, endMs: d.startMs + queueMs }) : at(d))),
    ];
  };
  it("the prefill_waiting slice is the queue: a long wait is llm_queue on SGLang's hop", () => {
    const baseline = buildBaseline(Array.from({ length: 20 }, (_, k) => copy(k + 1, 38 + (k % 5))));
    const ans = rankTrace({ spans: copy(99, 900), baseline });
    RcaAnswer.parse(ans);
    assert.equal(ans.llmPhases?.[0].engine, 'sglang');
    const top = ans.candidates[0];
    assert.equal(top.service, 'sglang');
    assert.ok(
      top.evidence.some((e) => e.kind === 'llm_queue'),
      JSON.stringify(top.evidence)
    );
    assert.match(ans.verdict!, /^sglang saturated: queued 900 ms \(usually 40 ms\)/);
  });
});
