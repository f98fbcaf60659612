import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CapacityStep, SaturationSignal } from '../../../contract/capacity';
import { analyseCapacity } from '../../../contract/capacity-analysis';
import { thresholdValue } from '../../../contract/thresholds';
import { arrivals, rateAt, stepWindows, validateProfile, type Profile } from '../../../loadgen/src/load/profiles';

const T0 = 1_800_000_000_000;
const STEP_MS = 60_000;

/** A synthetic sweep: offered rates, and what the chain achieved at each (good = achieved while under `goodUpTo`). */
function sweep(offered: number[], achieved: number[], o: { late?: number[]; cpu?: number[]; goodUpTo?: number } = {}) {
  return offered.map((rate, i): CapacityStep => ({
    index: i,
    startMs: T0 + i * STEP_MS,
    endMs: T0 + (i + 1) * STEP_MS,
    offeredRps: rate,
    sent: rate * 10,
    served: Math.round(achieved[i] * 10),
    good: rate <= (o.goodUpTo ?? Infinity) ? rate * 10 : Math.round(rate * 5),
    failed: 0,
    achievedRps: achieved[i],
    goodRps: rate <= (o.goodUpTo ?? Infinity) ? achieved[i] : achieved[i] / 2,
    sloHeld: rate <= (o.goodUpTo ?? Infinity),
    e2eP99Ms: 100,
    lateOver10ms: o.late?.[i] ?? 0,
    driverCpu: o.cpu?.[i] ?? 0.1,
  }));
}

/** A signal sampled every 2 s over the steps, `f(t)` its value at ms t. */
function signal(s: Omit<SaturationSignal, 'points'>, steps: number, f: (t: number) => number): SaturationSignal {
  const points: Array<[number, number]> = [];
  for (let t = T0; t < T0 + steps * STEP_MS; t += 2000) points.push([t, f(t)]);
  return { ...s, points };
}

const vllmQueue = (from: number) =>
  signal(
    { service: 'llm-vllm', pod: 'llm-vllm-1', resource: 'engine_queue', metric: 'vllm:num_requests_waiting', limit: 1 },
    6,
    (t) => (t >= from ? (t - from) / 1000 : 0)
  );

describe('capacity analysis (pure)', () => {
  it('knee at the first step where achieved stops following offered; maxGoodRps is the highest step that held', () => {
    const c = analyseCapacity(sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 7.9, 8.1, 8], { goodUpTo: 8 }));
    assert.equal(c.kneeRps, 10);
    assert.equal(c.kneeAtMs, T0 + 4 * STEP_MS);
    assert.equal(c.maxGoodRps, 8);
    assert.equal(c.lowerBound, false);
    // No signals read: the bottleneck is said to be unknown, with the client's evidence.
    assert.equal(c.bottleneck?.resource, 'unknown');
    assert.match(c.bottleneck!.evidence, /achieved 8\.1 req\/s of 10 offered/);
  });

  it("a ramp's short windows pool: the first window behind, with every later one behind, is the knee", () => {
    // 4 s windows (a 40 s ramp): each window's own deficit is within its count's noise, their sum is not.
    const w = (i: number, offered: number, achieved: number): CapacityStep => ({
      ...sweep([offered], [achieved])[0],
      index: i,
      startMs: T0 + i * 4000,
      endMs: T0 + (i + 1) * 4000,
    });
    const plateau = [1.5, 2.6, 3.7, 4.8, 5.9, 7, 8.1, 9.2, 10.3, 11.4].map((o, i) => w(i, o, Math.min(o, 5)));
    assert.equal(
      analyseCapacity(plateau).kneeRps,
      5.9,
      '5 of 5.9 is behind (under 90 %), and so is every later window'
    );
    // One window behind, then caught up: noise, no knee.
    const dip = [2, 3, 4, 5, 6, 7].map((o, i) => w(i, o, i === 3 ? 4 : o));
    assert.equal(analyseCapacity(dip).kneeRps, null);
  });

  it('an undecided bottleneck points at the signal nearest its limit from the knee on', () => {
    const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 7.9, 8.1, 8], { goodUpTo: 8 });
    const cpu = (pod: string, v: (t: number) => number) =>
      signal(
        { service: pod.split('-')[0], pod, resource: 'cpu', metric: 'rate(process_cpu_seconds_total)', limit: 0.9 },
        6,
        v
      );
    // The gateway's 0.85 core comes before the knee (the 10 req/s step): it is not what the knee met.
    const c = analyseCapacity(steps, [
      cpu('embedding-1', (t) => (t >= T0 + 4 * STEP_MS ? 0.72 : 0.2)),
      cpu('gateway-1', (t) => (t < T0 + STEP_MS ? 0.85 : 0.1)),
    ]);
    assert.equal(c.bottleneck?.resource, 'unknown');
    assert.match(
      c.bottleneck!.evidence,
      /2 read; nearest: rate\(process_cpu_seconds_total\) on embedding-1 at 72% of a core \(limit 90% of a core\)/
    );
  });

  it('a growing engine queue marks the knee before the client sees it, and names the hop, pod and resource', () => {
    const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 8, 9.5, 9.9]);
    const cpu = signal(
      { service: 'embedding', pod: 'embedding-1', resource: 'cpu', metric: 'process_cpu_seconds_total', limit: 0.9 },
      6,
      () => 0.3
    );
    const c = analyseCapacity(steps, [cpu, vllmQueue(T0 + 3 * STEP_MS)]);
    assert.equal(c.kneeRps, 8, 'the queue grew in the 8 req/s step, before achieved fell behind');
    assert.deepEqual(
      [c.bottleneck?.service, c.bottleneck?.pod, c.bottleneck?.resource],
      ['llm-vllm', 'llm-vllm-1', 'engine_queue']
    );
    assert.match(c.bottleneck!.evidence, /vllm:num_requests_waiting/);
    assert.equal(c.next, null, 'the embedding never saturated');
  });

  it('the first signal to saturate is the bottleneck, the next one on another hop is next', () => {
    const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 5, 5, 5]);
    const cpu = signal(
      { service: 'embedding', pod: 'embedding-1', resource: 'cpu', metric: 'process_cpu_seconds_total', limit: 0.9 },
      6,
      (t) => (t >= T0 + 2 * STEP_MS ? 0.98 : 0.4)
    );
    const c = analyseCapacity(steps, [vllmQueue(T0 + 4 * STEP_MS), cpu]);
    assert.equal(c.bottleneck?.service, 'embedding');
    assert.equal(c.bottleneck?.resource, 'cpu');
    assert.equal(c.next?.service, 'llm-vllm');
    assert.equal(c.next?.resource, 'engine_queue');
  });

  it('an engine queue with a full KV cache is kv_cache; with running at its plateau and KV room, running_limit', () => {
    const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 5, 5, 5]);
    const id = { service: 'llm-vllm', pod: 'llm-vllm-1' };
    const kvFull = signal({ ...id, resource: 'kv_cache', metric: 'vllm:kv_cache_usage_perc', limit: 0.95 }, 6, (t) =>
      t >= T0 + 3 * STEP_MS ? 0.99 : 0.5
    );
    const kv = analyseCapacity(steps, [vllmQueue(T0 + 3 * STEP_MS), kvFull]);
    assert.equal(kv.bottleneck?.resource, 'kv_cache');

    const kvRoom = signal(
      { ...id, resource: 'kv_cache', metric: 'vllm:kv_cache_usage_perc', limit: 0.95 },
      6,
      () => 0.4
    );
    const running = signal(
      { ...id, resource: 'running_limit', metric: 'vllm:num_requests_running', limit: null },
      6,
      (t) => Math.min(16, Math.round((t - T0) / 1000))
    );
    const rl = analyseCapacity(steps, [vllmQueue(T0 + 3 * STEP_MS), kvRoom, running]);
    assert.equal(rl.bottleneck?.resource, 'running_limit');
    assert.match(rl.bottleneck!.evidence, /vllm:num_requests_running sat at its maximum 16/);
  });

  it('a run that never saturated says so, with no bottleneck', () => {
    const c = analyseCapacity(sweep([2, 4, 6], [2, 4, 5.9]));
    assert.equal(c.kneeRps, null);
    assert.equal(c.bottleneck, null);
    assert.equal(c.maxGoodRps, 6);
    assert.equal(c.note, 'no knee up to 6 req/s');
  });

  it('the driver falling behind (late sends or its CPU) makes the capacity a lower bound, and says why', () => {
    const late = analyseCapacity(sweep([2, 4, 6], [2, 4, 5.9], { late: [0, 0, 12] }));
    assert.equal(late.lowerBound, true);
    assert.match(late.note!, /a lower bound: the load generator fell behind at 6 req\/s \(20\.0% of its sends/);
    const cpu = analyseCapacity(sweep([2, 4, 6, 8], [2, 4, 5, 5], { cpu: [0.2, 0.5, 0.97, 1] }));
    assert.equal(cpu.lowerBound, true);
    assert.match(cpu.note!, /its CPU was 97% of a core/);
    // Behind only after the knee: the knee stands.
    const after = analyseCapacity(sweep([2, 4, 6, 8], [2, 3, 3, 3], { cpu: [0.2, 0.3, 0.3, 0.99] }));
    assert.equal(after.lowerBound, false);
  });

  it('capacity_rps (the gates) reads maxGoodRps from a summary with steps, null without', () => {
    const steps = sweep([2, 4, 6, 8], [2, 4, 6, 5], { goodUpTo: 6 });
    const figures = { steps } as unknown as Parameters<typeof thresholdValue>[0];
    assert.equal(thresholdValue(figures, 'capacity_rps'), 6);
    assert.equal(thresholdValue({} as Parameters<typeof thresholdValue>[0], 'capacity_rps'), null);
  });
});

describe('sweep profile', () => {
  const p: Profile = { kind: 'sweep', rps: 20, startRps: 2, steps: 4, durationS: 8, arrivals: 'uniform' };
  it('holds each of its evenly spaced rates for duration / steps, and its windows are the steps', () => {
    validateProfile(p);
    assert.deepEqual(
      [0, 2, 4, 6].map((t) => rateAt(p, t + 1)),
      [2, 8, 14, 20]
    );
    const ts = [...arrivals(p, 1)];
    const per = [0, 1, 2, 3].map((i) => ts.filter((t) => t >= 2 * i && t < 2 * i + 2 - 1e-9).length);
    [4, 16, 28, 40].forEach((n, i) => assert.ok(Math.abs(per[i] - n) <= 1, `step ${i}: ${per[i]} arrivals, ~${n}`));
    assert.deepEqual(
      stepWindows(p).map((w) => [w.startS, w.endS]),
      [
        [0, 2],
        [2, 4],
        [4, 6],
        [6, 8],
      ]
    );
  });
  it('refuses a sweep without steps or with start ≥ end', () => {
    assert.throws(() => validateProfile({ ...p, steps: undefined }), /steps must be a whole number 2\.\.100/);
    assert.throws(() => validateProfile({ ...p, startRps: 30 }), /must be below rps/);
  });
});
