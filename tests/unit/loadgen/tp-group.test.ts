/**
 * Tensor-parallel groups (loadgen/src/chain/gpu/tp-group.ts): a step's collective on every rank, the watchdog naming
 * the rank that never answered, the group's restart with new ranks, and the engine failing every sequence on it
 * (vLLM's EngineDeadError) — with ranks simulated in this process, and with the real rank processes linked against
 * the stand-in libnccl.so.2 where gcc can build it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { FaultRegistry } from '../../../loadgen/src/chain/faults/registry';
import { loadChainConfig } from '../../../loadgen/src/config';
import {
  NCCL_TIMEOUT,
  NcclRankProcess,
  SimulatedNcclRank,
  type NcclRank,
} from '../../../loadgen/src/chain/gpu/nccl-rank';
import { ensureNcclStandIn } from '../../../loadgen/src/chain/gpu/nccl-stand-in';
import { NcclTimeoutError, TpGroup, rankPod } from '../../../loadgen/src/chain/gpu/tp-group';
import {
  ENGINE_DEAD_MESSAGE,
  ENGINE_DEFAULTS,
  EngineError,
  InferenceEngine,
} from '../../../loadgen/src/chain/llm/engine';
import { MODELS } from '../../../loadgen/src/chain/llm/models';
import { seededRandom } from '../../../loadgen/src/shared/random';

const log = pino({ level: 'silent' });
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function group(o: { stalled?: () => number | undefined; startRank?: (rank: number) => NcclRank; timeoutMs?: number }) {
  const starts: Array<Array<{ rank: number; pod: string; pid?: number }>> = [];
  const g = new TpGroup({
    group: 'llm-vllm-0',
    size: 2,
    timeoutMs: o.timeoutMs ?? 150,
    restartMs: 100,
    log,
    startRank: o.startRank ?? (() => new SimulatedNcclRank()),
    stalledRank: o.stalled ?? (() => undefined),
    onStart: (r) => starts.push(r),
  });
  return { g, starts };
}

describe('tensor-parallel group', () => {
  it('names its ranks as LeaderWorkerSet does: the leader is the group, rank r is <group>-<r>', () => {
    assert.equal(rankPod('llm-vllm-0', 0), 'llm-vllm-0');
    assert.equal(rankPod('llm-vllm-0', 1), 'llm-vllm-0-1');
  });

  it('completes a collective when every rank answers, and reports its ranks at start', async () => {
    const { g, starts } = group({});
    await g.allReduce(4096);
    assert.deepEqual(
      starts[0].map((r) => r.pod),
      ['llm-vllm-0', 'llm-vllm-0-1']
    );
    assert.equal(g.timeouts, 0);
    g.stop();
  });

  it('a stalled rank: the watchdog fires after the timeout, names that rank, and the group restarts', async () => {
    let stalled: number | undefined = 1;
    const { g, starts } = group({ stalled: () => stalled });
    const t0 = performance.now();
    const err = await g.allReduce(8192).then(
      () => assert.fail('the collective should have timed out'),
      (e: unknown) => e
    );
    const took = performance.now() - t0;
    assert.ok(err instanceof NcclTimeoutError);
    const i = err.info;
    assert.equal(i.rank, 1);
    assert.equal(i.rankPod, 'llm-vllm-0-1');
    assert.deepEqual(i.stalledRanks, [1]);
    assert.equal(i.collective, 'ncclAllReduce');
    assert.equal(i.seq, 1);
    assert.equal(i.result, NCCL_TIMEOUT, 'the aborted call returned ncclTimeout');
    assert.ok(took >= 150, `the request hung until the watchdog (${took} ms)`);
    assert.ok(i.ranForMs >= 150);
    assert.match(
      i.message,
      /^\[Rank 1\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=1, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, Timeout\(ms\)=150\) ran for \d+ milliseconds before timing out\.$/
    );
    assert.ok(g.restarting, 'restarting after the timeout');
    await assert.rejects(g.allReduce(1), /not running/);
    stalled = undefined;
    await wait(250);
    assert.ok(!g.restarting);
    assert.equal(starts.length, 2, 'new ranks started');
    assert.equal(g.restarts, 1);
    await g.allReduce(4096); // healthy again, sequence numbers from 1
    g.stop();
  });

  it('the engine fails every running and waiting sequence with EngineDeadError when the collective times out', async () => {
    const { g } = group({ stalled: () => 0, timeoutMs: 100 });
    const e = new InferenceEngine({
      ...ENGINE_DEFAULTS,
      scale: (ms) => ms * 0.001,
      rand: seededRandom(1),
      kvFactor: () => 1,
      oomProbability: () => 0,
      collective: (seqs) => g.allReduce(seqs * 4096),
    });
    const model = MODELS['hopscope-llama-8b-v1'];
    const run = (k: string) =>
      new Promise<unknown>((resolve) =>
        e.submit(
          { model, promptTokens: 50, prefixKey: k, prefixTokens: 10, maxTokens: 8, targetTokens: 8 },
          { onToken: () => {}, onDone: () => resolve('done'), onError: resolve }
        )
      );
    const errors = await Promise.all([run('a'), run('b'), run('c')]);
    for (const err of errors) {
      assert.ok(err instanceof EngineError, String(err));
      assert.equal(err.code, 'engine_dead');
      assert.equal(err.message, ENGINE_DEAD_MESSAGE);
      assert.ok(err.cause instanceof NcclTimeoutError);
      assert.equal(err.cause.info.rank, 0);
    }
    assert.equal(e.deadFailures, 3);
    assert.equal(e.numRunning + e.numWaiting, 0);
    e.stop();
    g.stop();
  });

  const standIn = process.platform === 'linux' ? ensureNcclStandIn() : { ok: false as const, reason: 'not Linux' };
  it(
    'with the stand-in libnccl.so.2: rank processes answer ncclSuccess, and a stalled one ncclTimeout once aborted',
    { skip: standIn.ok ? undefined : standIn.reason },
    async () => {
      if (!standIn.ok) return;
      const { g, starts } = group({
        stalled: () => 1,
        timeoutMs: 200,
        startRank: (rank) => new NcclRankProcess(standIn, 2, rank, log),
      });
      const pids = starts[0].map((r) => r.pid);
      assert.ok(pids.every((p) => typeof p === 'number' && p > 0) && pids[0] !== pids[1], 'one process per rank');
      const err = await g.allReduce(4096).then(
        () => assert.fail('should time out'),
        (x: unknown) => x
      );
      assert.ok(err instanceof NcclTimeoutError);
      assert.equal(err.info.rank, 1);
      assert.equal(err.info.pid, pids[1], "the stalled rank's process");
      assert.equal(err.info.resultName, 'ncclTimeout', 'the real call returned once its communicator was aborted');
      g.stop();
      const healthy = new NcclRankProcess(standIn, 2, 0, log);
      assert.equal(await healthy.allReduce(4096, false), 0);
      healthy.stop();
    }
  );
});

describe('tensor-parallel settings', () => {
  it('HOPSCOPE_TP and HOPSCOPE_EXECUTE_MODEL_TIMEOUT_SECONDS are read, defaulting to one rank and vLLM’s 300 s', () => {
    const d = loadChainConfig({}, {});
    assert.deepEqual([d.tensorParallel, d.executeModelTimeoutS], [1, 300]);
    const c = loadChainConfig({}, { HOPSCOPE_TP: '2', HOPSCOPE_EXECUTE_MODEL_TIMEOUT_SECONDS: '1.5' });
    assert.deepEqual([c.tensorParallel, c.executeModelTimeoutS], [2, 1.5]);
    assert.throws(() => loadChainConfig({}, { HOPSCOPE_TP: '9' }), /tensorParallel/);
    assert.throws(() => loadChainConfig({}, { HOPSCOPE_EXECUTE_MODEL_TIMEOUT_SECONDS: '0' }), /executeModelTimeoutS/);
  });

  it('nccl_timeout: a rank (0 allowed) on an LLM hop only; other hops refused', () => {
    const reg = new FaultRegistry({ 'llm-vllm': ['llm-vllm-0'] });
    assert.deepEqual(reg.parse({ target: 'llm-vllm', kind: 'nccl_timeout', magnitude: 0, pod: 'llm-vllm-0' }), {
      target: 'llm-vllm',
      kind: 'nccl_timeout',
      magnitude: 0,
      durationS: 120,
      pod: 'llm-vllm-0',
    });
    assert.equal(reg.parse({ target: 'llm-vllm', kind: 'nccl_timeout' }).magnitude, 1);
    assert.throws(() => reg.parse({ target: 'rag', kind: 'nccl_timeout' }), /applies only to llm-vllm/);
  });
});
