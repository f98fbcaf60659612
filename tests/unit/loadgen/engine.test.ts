import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ENGINE_DEFAULTS, EngineError, InferenceEngine, type SeqResult, type StepInfo } from '../../../loadgen/src/chain/llm/engine';
import { MODELS } from '../../../loadgen/src/chain/llm/models';
import { seededRandom } from '../../../loadgen/src/chain/util';

// Step durations are reported in (scaled) simulated ms, so these tests check the model, not the wall clock.
function engine(over: Partial<ConstructorParameters<typeof InferenceEngine>[0]> = {}) {
  return new InferenceEngine({ ...ENGINE_DEFAULTS, scale: (ms) => ms * 0.001, rand: seededRandom(1), kvFactor: () => 1, oomProbability: () => 0, ...over });
}
const model = MODELS['hopscope-llama-8b-v1'];
function run(e: InferenceEngine, promptTokens: number, tokens: number, prefixKey = 'p'): Promise<SeqResult> {
  return new Promise((resolve, reject) => e.submit({ model, promptTokens, prefixKey, prefixTokens: 20, maxTokens: tokens, targetTokens: tokens }, { onToken: () => {}, onDone: resolve, onError: reject }));
}

describe('simulated continuous-batching engine', () => {
  it('prefill time grows with uncached prompt tokens', async () => {
    const e = engine();
    const steps: StepInfo[] = [];
    e.on('step', (s) => steps.push(s));
    await run(e, 100, 1, 'a');
    await run(e, 2000, 1, 'b');
    assert.ok(steps[1].durationMs > steps[0].durationMs * 5, `${steps[0].durationMs} vs ${steps[1].durationMs}`);
  });

  it('decode time per step grows with batch size', async () => {
    const e = engine();
    const decode: StepInfo[] = [];
    e.on('step', (s) => { if (s.prefillSeqs === 0) decode.push(s); });
    await run(e, 50, 6);
    const single = decode[decode.length - 1];
    decode.length = 0;
    await Promise.all(Array.from({ length: 24 }, (_, i) => run(e, 50, 6, `k${i}`)));
    const batched = decode.find((s) => s.decodeSeqs >= 20)!;
    assert.ok(batched, 'a big decode batch formed');
    assert.ok(batched.durationMs > single.durationMs * 1.5, `${single.durationMs} vs ${batched.durationMs}`);
  });

  it('prefix cache hits on a shared prefix; kv_cache_thrash removes them and preempts', async () => {
    const e = engine();
    await run(e, 200, 2, 'shared');
    const r = await run(e, 200, 2, 'shared');
    assert.equal(r.cachedTokens, 20);
    const t = engine({ kvFactor: () => 0.03, maxNumSeqs: 32 });
    const rs = await Promise.all(Array.from({ length: 16 }, () => run(t, 120, 20, 'shared')));
    assert.ok(rs.slice(1).every((x) => x.cachedTokens === 0), 'no prefix hits while thrashing');
    assert.ok(t.preemptions > 0, 'KV overflow preempts');
  });

  it('gpu_oom fails the allocation at admission', async () => {
    const e = engine({ oomProbability: () => 1 });
    await assert.rejects(run(e, 10, 2), (err: EngineError) => err.code === 'gpu_oom' && /CUDA out of memory/.test(err.message));
    assert.equal(e.oomFailures, 1);
  });

  it('refuses work beyond its queue (overloaded)', () => {
    const e = engine({ maxQueue: 1 });
    e.submit({ model, promptTokens: 5, prefixKey: 'x', prefixTokens: 0, maxTokens: 1, targetTokens: 1 }, { onToken() {}, onDone() {}, onError() {} });
    assert.throws(() => e.submit({ model, promptTokens: 5, prefixKey: 'x', prefixTokens: 0, maxTokens: 1, targetTokens: 1 }, { onToken() {}, onDone() {}, onError() {} }), /queue full/);
    e.stop();
  });
});
