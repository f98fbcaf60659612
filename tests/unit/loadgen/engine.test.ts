import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENGINE_DEFAULTS,
  EngineError,
  engineOptionsFor,
  InferenceEngine,
  type SeqResult,
  type StepInfo,
} from '../../../loadgen/src/chain/llm/engine';
import { MODELS } from '../../../loadgen/src/chain/llm/models';
import { seededRandom } from '../../../loadgen/src/shared/random';

// Step durations are reported in (scaled) simulated ms, so these tests check the model, not the wall clock.
function engine(over: Partial<ConstructorParameters<typeof InferenceEngine>[0]> = {}) {
  return new InferenceEngine({
    ...ENGINE_DEFAULTS,
    scale: (ms) => ms * 0.001,
    rand: seededRandom(1),
    kvFactor: () => 1,
    oomProbability: () => 0,
    ...over,
  });
}
const model = MODELS['hopscope-llama-8b-v1'];
function run(e: InferenceEngine, promptTokens: number, tokens: number, prefixKey = 'p'): Promise<SeqResult> {
  return new Promise((resolve, reject) =>
    e.submit(
      { model, promptTokens, prefixKey, prefixTokens: 20, maxTokens: tokens, targetTokens: tokens },
      { onToken: () => {}, onDone: resolve, onError: reject }
    )
  );
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
    e.on('step', (s) => {
      if (s.prefillSeqs === 0) decode.push(s);
    });
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
    assert.ok(
      rs.slice(1).every((x) => x.cachedTokens === 0),
      'no prefix hits while thrashing'
    );
    assert.ok(t.preemptions > 0, 'KV overflow preempts');
  });

  it('gpu_oom fails the allocation at admission', async () => {
    const e = engine({ oomProbability: () => 1 });
    await assert.rejects(
      run(e, 10, 2),
      (err: EngineError) => err.code === 'gpu_oom' && /CUDA out of memory/.test(err.message)
    );
    assert.equal(e.oomFailures, 1);
  });

  it('every admission makes its KV allocation in the driver; a failed one is reported only once the driver call is made', async () => {
    const calls: Array<{ bytes: number; fail: boolean; at: number }> = [];
    let release: (r: number) => void = () => {};
    const e = engine({
      oomProbability: () => 1,
      gpuAlloc: (bytes, fail) => {
        calls.push({ bytes, fail, at: performance.now() });
        return new Promise((r) => {
          release = r;
        });
      },
    });
    let failed: EngineError | undefined;
    void run(e, 40, 2).catch((err: EngineError) => {
      failed = err;
    });
    const failure = (): EngineError | undefined => failed;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(calls.length, 1);
    assert.equal(calls[0].fail, true);
    // 40 prompt tokens + 1 → 48 tokens in 16-token blocks, 128 KiB each for the 8B model.
    assert.equal(calls[0].bytes, 48 * model.kvBytesPerToken);
    assert.equal(failure(), undefined, 'the request hears of the failure only after the driver call');
    release(2);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(failure()?.code, 'gpu_oom');
    assert.equal(failure()?.cudaResult, 2);
    assert.equal(failure()?.bytes, calls[0].bytes);
    const ok = engine({
      gpuAlloc: (bytes, fail) => {
        calls.push({ bytes, fail, at: 0 });
        return Promise.resolve(0);
      },
    });
    await run(ok, 10, 3);
    assert.deepEqual(
      calls.slice(1).map((c) => c.fail),
      [false],
      'a healthy admission allocates once, successfully'
    );
  });

  it('leaked GPU memory shrinks the usable KV cache: more preemption, then the allocation fails (GPU OOM)', async () => {
    const pool = ENGINE_DEFAULTS.kvPoolBytes;
    const healthy = engine();
    const leaking = engine();
    assert.equal(healthy.capacityTokens, ENGINE_DEFAULTS.kvCapacityTokens);
    leaking.leakedBytes = pool * 0.99;
    // 1 % of 32,768 tokens is left: 327 tokens → (a block-rounded capacity) ≈ 20 sequences of 16 blocks.
    assert.equal(leaking.capacityTokens, Math.floor(ENGINE_DEFAULTS.kvCapacityTokens * 0.01));
    const batch = (e: InferenceEngine) => Promise.all(Array.from({ length: 12 }, (_, i) => run(e, 40, 24, `l${i}`)));
    await batch(healthy);
    const rs = await batch(leaking);
    assert.equal(healthy.preemptions, 0, 'the whole cache: nothing preempted');
    assert.ok(leaking.preemptions > 0, 'the shrunk cache overflows and preempts');
    assert.ok(
      rs.some((r) => r.scheduledMs - r.arrivalMs > 0) && rs.every((r) => r.outputTokens === 24),
      'still served, later'
    );
    // Nothing running and it still does not fit beside the leak: a real driver call that fails.
    const calls: Array<[number, boolean]> = [];
    const full = engine({
      gpuAlloc: (bytes, fail) => {
        calls.push([bytes, fail]);
        return Promise.resolve(fail ? 2 : 0);
      },
    });
    full.leakedBytes = pool;
    await assert.rejects(
      run(full, 400, 2),
      (err: EngineError) =>
        err.code === 'gpu_oom' && err.cudaResult === 2 && /4\.00 GiB held outside the KV cache/.test(err.message)
    );
    assert.deepEqual(calls, [[416 * model.kvBytesPerToken, true]]);
    assert.equal(full.oomFailures, 1);
    full.leakedBytes = 0; // freed (the fault ended): the same request fits again
    assert.equal((await run(full, 400, 2)).outputTokens, 2);
  });

  it('refuses work beyond its queue (overloaded)', () => {
    const e = engine({ maxQueue: 1 });
    e.submit(
      { model, promptTokens: 5, prefixKey: 'x', prefixTokens: 0, maxTokens: 1, targetTokens: 1 },
      { onToken() {}, onDone() {}, onError() {} }
    );
    assert.throws(
      () =>
        e.submit(
          { model, promptTokens: 5, prefixKey: 'x', prefixTokens: 0, maxTokens: 1, targetTokens: 1 },
          { onToken() {}, onDone() {}, onError() {} }
        ),
      /queue full/
    );
    e.stop();
  });
});

describe('the engine limits an operator sets (vLLM --max-num-seqs, --num-gpu-blocks-override)', () => {
  it('are each backend’s simulated defaults when unset, and replace them when set', () => {
    assert.equal(engineOptionsFor('vllm').maxNumSeqs, 32);
    assert.equal(engineOptionsFor('tgi').maxNumSeqs, 24);
    assert.equal(engineOptionsFor('vllm').kvCapacityTokens, 32_768);
    const o = engineOptionsFor('tgi', { maxNumSeqs: 2, numGpuBlocks: 100 });
    assert.equal(o.maxNumSeqs, 2);
    assert.equal(o.kvCapacityTokens, 1600, '100 blocks of 16 tokens');
    assert.equal(o.decodeBaseMs, 7, 'the backend’s own step costs stay');
  });

  it('max_num_seqs 2 runs two sequences at a time and queues the third', async () => {
    const e = engine(engineOptionsFor('vllm', { maxNumSeqs: 2 }));
    let most = 0;
    e.on('step', () => {
      most = Math.max(most, e.numRunning);
    });
    const all = [run(e, 50, 20, 'a'), run(e, 50, 20, 'b'), run(e, 50, 20, 'c')];
    assert.equal(e.numWaiting, 3, 'all three wait before the first step');
    await all[0];
    await Promise.all(all);
    assert.equal(most, 2);
  });
});
