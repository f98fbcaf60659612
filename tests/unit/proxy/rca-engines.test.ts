/**
 * POST /api/rca with the inference server's spans as vLLM and TGI emit them, from service names that say nothing of
 * the engine (tests/support/rca/engine-spans.ts: derived from vLLM's output_processor.py and TGI's router server.rs
 * at the commits named there), as OTLP JSON: a saturated vLLM ranked first with `llm_queue`, a long prompt with
 * `llm_prefill`, a TGI queue; the verdict and the phases in the answer; no engine state given, and the answer says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RcaAnswer, type Span } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { spansToOtlp } from '../../support/otlp-encode';
import { type EngineCall, engineTrace, healthyCall } from '../../support/rca/engine-spans';

const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined, alertIntervalMs: 0 };

describe('POST /api/rca on vLLM- and TGI-shaped spans', () => {
  let proxy: RunningProxy;
  before(async () => {
    proxy = await startProxy({ port: 0, ...none });
  });
  after(() => proxy.close());

  const traces = (
    engine: 'vllm' | 'tgi',
    service: string,
    pod: string,
    from: number,
    n: number,
    f?: (c: EngineCall, i: number) => EngineCall
  ): Span[] =>
    Array.from({ length: n }, (_, i) =>
      engineTrace({
        seed: from + i,
        engine,
        service,
        pod,
        call: f ? f(healthyCall(from + i), i) : healthyCall(from + i),
      })
    ).flat();

  const rca = async (incident: Span[], baseline: Span[]) => {
    const r = await fetch(`${proxy.url}/api/rca`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ traces: spansToOtlp(incident), baseline: spansToOtlp(baseline) }),
    });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    return RcaAnswer.parse(body);
  };

  it('vLLM saturated (llm_request, gen_ai.latency.*, service "my-llm"): llm_queue first, the verdict, the phases', async () => {
    const base = traces('vllm', 'my-llm', 'my-llm-7f9c', 1, 30);
    const incident = traces('vllm', 'my-llm', 'my-llm-7f9c', 100, 10, (c, i) => ({ ...c, queueMs: 2400 + 50 * i }));
    const ans = await rca(incident, base);
    assert.equal(ans.candidates[0].service, 'my-llm');
    assert.equal(ans.candidates[0].pod, 'my-llm-7f9c');
    const q = ans.candidates[0].evidence.find((e) => e.kind === 'llm_queue');
    assert.equal(q?.traces, 10);
    assert.match(ans.verdict!, /^my-llm-7f9c saturated in 10 of 10 traces: queued 2\.9 s \(usually 4\d ms\)/);
    assert.ok(ans.llmPhases!.length >= 1 && ans.llmPhases![0].engine === 'vllm');
    assert.ok(ans.missing.some((m) => m.startsWith('engine state: none given')));
  });

  it('vLLM long prompts: llm_prefill, the verdict names prompt tokens against the usual', async () => {
    const base = traces('vllm', 'my-llm', 'my-llm-7f9c', 1, 30);
    const incident = traces('vllm', 'my-llm', 'my-llm-7f9c', 200, 10, (c) => ({
      ...c,
      prefillMs: 1900,
      promptTokens: 7900,
    }));
    const ans = await rca(incident, base);
    assert.equal(ans.candidates[0].service, 'my-llm');
    assert.ok(ans.candidates[0].evidence.some((e) => e.kind === 'llm_prefill'));
    assert.match(
      ans.verdict!,
      /^long prompt in 10 of 10 traces at my-llm-7f9c: prefill 1\.9 s for 7,900 prompt tokens \(usually \d{3}\)$/
    );
  });

  it('TGI (the router span\'s Rust durations, service "textgen-router"): its queue ranked first', async () => {
    const base = traces('tgi', 'textgen-router', 'tgi-0', 1, 30);
    const incident = traces('tgi', 'textgen-router', 'tgi-0', 300, 10, (c) => ({ ...c, queueMs: 3000 }));
    const ans = await rca(incident, base);
    assert.equal(ans.candidates[0].service, 'textgen-router');
    assert.ok(ans.candidates[0].evidence.some((e) => e.kind === 'llm_queue'));
    assert.equal(ans.llmPhases![0].engine, 'tgi');
    assert.deepEqual(
      ans.llmPhases![0].phases.map((p) => p.name),
      ['validation', 'queue', 'inference']
    );
    assert.match(ans.verdict!, /^tgi-0 saturated in 10 of 10 traces: queued 3\.0 s/);
  });
});
