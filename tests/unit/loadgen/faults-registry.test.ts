import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FaultAnnotation } from '../../../contract/faults';
import { FaultError, FaultRegistry } from '../../../loadgen/src/chain/faults/registry';

const pods = { rag: ['rag-a-0', 'rag-a-1'], 'llm-vllm': ['llm-vllm-b-0'] };

describe('fault registry', () => {
  it('validates targets, kinds, magnitudes, durations and pods with the allowed values', () => {
    const r = new FaultRegistry(pods);
    const err = (body: unknown) => {
      try {
        r.parse(body);
      } catch (e) {
        return e as FaultError;
      }
      throw new Error('accepted');
    };
    assert.match(
      err({ target: 'db', kind: 'latency' }).message,
      /unknown fault target "db"; allowed: gateway, embedding, vector-cache, rag, llm-vllm, llm-tgi, llm-sglang, agent, tool/
    );
    assert.match(
      err({ target: 'rag', kind: 'meteor' }).message,
      /allowed: latency, error, timeout, cpu_hog, tls_slow_handshake, gpu_oom, kv_cache_thrash, tcp_retransmit, nccl_timeout, gpu_memory_leak/
    );
    assert.equal(err({ target: 'rag', kind: 'error', magnitude: 1.5 }).code, 'magnitude_out_of_range');
    assert.equal(err({ target: 'rag', kind: 'latency', magnitude: -1 }).status, 400);
    assert.equal(err({ target: 'rag', kind: 'latency', durationS: 0 }).code, 'duration_out_of_range');
    assert.equal(err({ target: 'rag', kind: 'gpu_oom' }).code, 'kind_not_applicable');
    assert.match(err({ target: 'rag', kind: 'latency', pod: 'rag-x' }).message, /allowed: rag-a-0, rag-a-1/);
    assert.deepEqual(r.parse({ target: 'rag', kind: 'latency' }), {
      target: 'rag',
      kind: 'latency',
      magnitude: 500,
      durationS: 120,
      pod: undefined,
    });
  });

  it('publishes faults as contract annotations, scoped to a pod when asked, and ends them', async () => {
    const r = new FaultRegistry(pods);
    const f = await r.add({ target: 'rag', kind: 'latency', magnitude: 100, pod: 'rag-a-1' });
    assert.equal(r.active('rag', 'rag-a-1', 'latency')?.id, f.id);
    assert.equal(r.active('rag', 'rag-a-0', 'latency'), undefined);
    const [a] = r.list();
    FaultAnnotation.parse(a);
    assert.equal(a.active, true);
    assert.ok(r.end(f.id));
    assert.equal(r.end(f.id), false);
    const [b] = r.list();
    assert.equal(b.active, false);
    assert.ok(b.endMs! >= b.startMs);
  });

  it('caps active faults (429 beyond), counting ended ones out', async () => {
    const r = new FaultRegistry(pods, 3);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await r.add({ target: 'rag', kind: 'latency', magnitude: 1 })).id);
    await assert.rejects(
      r.add({ target: 'rag', kind: 'latency', magnitude: 1 }),
      (e: FaultError) => e.status === 429 && e.code === 'too_many_faults' && /at most 3 faults/.test(e.message)
    );
    r.end(ids[0]);
    assert.equal(r.activeCount, 2);
    await r.add({ target: 'rag', kind: 'latency', magnitude: 1 });
    // A fault still in its beforeStart (an nft rule being installed) holds its place.
    r.end(ids[1]);
    let proceed: () => void = () => {};
    const slow = r.add(
      { target: 'rag', kind: 'latency', magnitude: 1 },
      () =>
        new Promise<void>((res) => {
          proceed = res;
        })
    );
    await assert.rejects(r.add({ target: 'rag', kind: 'latency', magnitude: 1 }), /at most 3/);
    proceed();
    await slow;
    assert.equal(r.activeCount, 3);
    r.endAll();
  });

  it('expires after durationS', async () => {
    const r = new FaultRegistry(pods);
    const f = await r.add({ target: 'rag', kind: 'error', durationS: 0.05 });
    await new Promise((res) => setTimeout(res, 120));
    assert.equal(r.get(f.id)?.active, false);
  });
});
