/**
 * The run page's capacity (issue 19, item 3): the bottleneck in one sentence and offered vs achieved vs goodput per
 * step with the knee, from capacities the pure analysis finds in synthetic sweeps (contract/capacity-analysis.ts), so
 * the sentence is checked against what the proxy really answers. A run without capacity gets neither.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { analyseCapacity, Capacity, type CapacityStep, type SaturationSignal } from '../../../contract';
import {
  capacitySentence,
  capacityStepsFrame,
  saturationFrames,
  saturationHops,
  saturationNotices,
} from '../../../src/datasource/frames/capacity';

const T0 = 1_800_000_000_000;
const STEP_MS = 60_000;

function sweep(offered: number[], achieved: number[], o: { goodUpTo?: number; late?: number[] } = {}): CapacityStep[] {
  return offered.map((rate, i) => ({
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
    driverCpu: 0.1,
  }));
}

function signal(s: Omit<SaturationSignal, 'points'>, f: (t: number) => number): SaturationSignal {
  const points: Array<[number, number]> = [];
  for (let t = T0; t < T0 + 6 * STEP_MS; t += 2000) points.push([t, f(t)]);
  return { ...s, points };
}

const queue = signal(
  { service: 'llm-vllm', pod: 'llm-vllm-0', resource: 'engine_queue', metric: 'vllm:num_requests_waiting', limit: 1 },
  (t) => (t >= T0 + 4 * STEP_MS ? (t - T0 - 4 * STEP_MS) / 1000 : 0)
);
const cpu = signal(
  { service: 'embedding', pod: 'embedding-1', resource: 'cpu', metric: 'process_cpu_seconds_total', limit: 0.9 },
  (t) => (t >= T0 + 5 * STEP_MS ? 0.95 : 0.3)
);

describe('run page capacity sentence', () => {
  test('names the capacity, the knee, the hop, pod and resource with its evidence, and what saturated next', () => {
    const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 8, 8.2, 8.1], { goodUpTo: 8 });
    const c = Capacity.parse(analyseCapacity(steps, [queue, cpu]));
    const s = capacitySentence(c)!;
    assert.ok(c.bottleneck && c.next, 'the synthetic sweep saturates two hops');
    assert.match(
      s,
      /^Capacity 8 req\/s: knee at 10 req\/s; llm-vllm \(pod llm-vllm-0\) saturated first: engine queue \(/
    );
    assert.ok(s.includes(c.bottleneck.evidence), 'the evidence is the analysis its own');
    assert.match(s, /; next: embedding \(pod embedding-1\), CPU \(process_cpu_seconds_total/);
    assert.ok(s.endsWith('.'));
  });

  test('a run that never saturated says so', () => {
    const c = analyseCapacity(sweep([1, 2, 3], [1, 2, 3]));
    assert.equal(capacitySentence(c), 'Capacity 3 req/s. No knee up to 3 req/s.');
  });

  test('the lower-bound note is said, and a knee no signal explains says no hop was named', () => {
    const steps = sweep([2, 4, 6, 8], [2, 4, 4.5, 4.4], { goodUpTo: 4, late: [0, 0, 30, 40] });
    const c = analyseCapacity(steps);
    assert.equal(c.lowerBound, true);
    const s = capacitySentence(c)!;
    assert.match(s, /^Capacity 4 req\/s: knee at 6 req\/s; no hop's saturation signal named the bottleneck \(achieved/);
    assert.match(s, /\. A lower bound: the load generator fell behind at 6 req\/s \(/);
  });

  test('no step held the SLOs; no capacity (a constant run) → nothing', () => {
    const c = analyseCapacity(sweep([5, 10], [2, 2], { goodUpTo: 1 }));
    assert.match(capacitySentence(c)!, /^No step held the SLOs: knee at 5 req\/s/);
    assert.equal(capacitySentence(null), null);
    assert.equal(capacitySentence(undefined), null);
  });
});

describe('run page capacity frame', () => {
  const steps = sweep([2, 4, 6, 8, 10, 12], [2, 4, 6, 8, 8.2, 8.1], { goodUpTo: 8 });
  const capacity = analyseCapacity(steps, [queue]);

  test('offered, achieved and goodput per step at each step start, the knee one point at its step', () => {
    const [f] = capacityStepsFrame({ summary: { steps } as never, capacity }, 'capacity');
    assert.equal(f.refId, 'capacity');
    assert.equal(f.length, 6);
    const col = (n: string) => f.fields.find((x) => x.name === n)!.values;
    assert.deepEqual(
      col('time'),
      steps.map((s) => s.startMs)
    );
    assert.deepEqual(col('offered'), [2, 4, 6, 8, 10, 12]);
    assert.deepEqual(col('achieved'), [2, 4, 6, 8, 8.2, 8.1]);
    assert.deepEqual(col('goodput'), [2, 4, 6, 8, 4.1, 4.05]);
    assert.equal(capacity.kneeAtMs, T0 + 4 * STEP_MS);
    assert.deepEqual(col('knee'), [null, null, null, null, 10, null]);
    assert.equal(f.fields.find((x) => x.name === 'knee')!.config.custom?.drawStyle, 'points');
  });

  test('no knee → the knee series is empty; no capacity or no steps → no frame', () => {
    const calm = sweep([1, 2], [1, 2]);
    const [f] = capacityStepsFrame({ summary: { steps: calm } as never, capacity: analyseCapacity(calm) }, 'c');
    assert.deepEqual(f.fields.find((x) => x.name === 'knee')!.values, [null, null]);
    assert.deepEqual(capacityStepsFrame({ summary: { steps } as never, capacity: null }, 'c'), []);
    assert.deepEqual(capacityStepsFrame({ summary: { steps: [] } as never, capacity }, 'c'), []);
    assert.deepEqual(capacityStepsFrame({ summary: null, capacity }, 'c'), []);
  });
});

describe("each hop's saturation signals over the run (the run page's per-hop panels)", () => {
  const sig = (
    service: string,
    resource: SaturationSignal['resource'],
    limit: number | null,
    values: number[]
  ): SaturationSignal => ({
    service,
    pod: `${service}-0`,
    resource,
    metric: `m_${resource}`,
    limit,
    points: values.map((v, i) => [T0 + i * 1000, v]),
  });
  const answer = {
    runId: 'sweep-1',
    from: T0,
    to: T0 + 3000,
    signals: [
      sig('llm-vllm', 'engine_queue', 1, [0, 2, 5]),
      sig('llm-vllm', 'running_limit', null, [1, 1, 1]),
      sig('embedding', 'cpu', 0.9, [0.2, 0.5, 0.95]),
    ],
    missing: ['Prometheus: down'],
  };

  test('the hops, once each in the order read; a frame per signal of the asked hop, its values as read', () => {
    assert.deepEqual(saturationHops(answer), ['llm-vllm', 'embedding']);
    const frames = saturationFrames(answer, 'saturation', 'llm-vllm');
    assert.deepEqual(
      frames.map((f) => f.fields[1].config.displayNameFromDS),
      ['engine queue (llm-vllm-0)', 'running-sequence limit (llm-vllm-0)']
    );
    assert.deepEqual(frames[0].fields[1].values, [0, 2, 5]);
    assert.deepEqual(frames[0].fields[0].values, [T0, T0 + 1000, T0 + 2000]);
    assert.equal(saturationFrames(answer, 'saturation').length, 3, 'every hop when none is asked');
  });

  test('the limit the analysis applies is a dashed threshold; a signal without one (running) has none', () => {
    const [cpu] = saturationFrames(answer, 'saturation', 'embedding');
    const f = cpu.fields[1].config;
    assert.equal(f.unit, 'percentunit');
    assert.equal((f.thresholds?.steps ?? [])[1].value, 0.9);
    assert.equal((f.custom as { thresholdsStyle: { mode: string } }).thresholdsStyle.mode, 'dashed');
    assert.match(f.description ?? '', /m_cpu; saturated at 0.9/);
    const [, running] = saturationFrames(answer, 'saturation', 'llm-vllm');
    assert.equal(running.fields[1].config.thresholds, undefined);
    assert.deepEqual(
      saturationNotices(answer).map((n) => n.text),
      ['Missing: Prometheus: down']
    );
  });
});
