import assert from 'node:assert/strict';
import { test } from 'node:test';

import { computeInsights } from '../../../src/transforms/insights';

const times = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => i * 60_000);

test('KV-cache insight needs RPS ≥ 120 and GPU ≥ 92% at the same instant', () => {
  const base = { times, p99Seconds: times.map(() => 0.5), tokensPerSecond: times.map(() => 1000) };
  const none = computeInsights({
    ...base,
    rps: [130, 130, 50, 50, 50, 50, 50, 50],
    gpuActive: [0.5, 0.5, 0.95, 0.95, 0.5, 0.5, 0.5, 0.5],
  });
  assert.equal(none.length, 0);
  const one = computeInsights({
    ...base,
    rps: [50, 50, 50, 125, 121, 50, 50, 50],
    gpuActive: [0.5, 0.5, 0.5, 0.93, 0.92, 0.99, 0.5, 0.5],
  });
  assert.equal(one.length, 1);
  assert.equal(one[0].id, 'kv-cache-preallocation');
  assert.equal(one[0].atMs, times[4]);
  assert.equal(one[0].samples, 2);
  assert.match(one[0].detail, /121/);
});

test('pruning insight needs P99 > 2.1 s with tokens/s down ≥ 15% from the first-half baseline', () => {
  const base = { times, rps: times.map(() => 10), gpuActive: times.map(() => 0.1) };
  const slowOnly = computeInsights({ ...base, p99Seconds: times.map(() => 3), tokensPerSecond: times.map(() => 1000) });
  assert.equal(slowOnly.length, 0, 'slow but throughput steady');
  const dropOnly = computeInsights({
    ...base,
    p99Seconds: times.map(() => 1),
    tokensPerSecond: [1000, 1000, 1000, 1000, 800, 800, 800, 800],
  });
  assert.equal(dropOnly.length, 0, 'throughput down but fast');
  const both = computeInsights({
    ...base,
    p99Seconds: [1, 1, 1, 1, 2.5, 2.2, 2.0, 1],
    tokensPerSecond: [1000, 1000, 1000, 1000, 840, 860, 800, 1000],
  });
  assert.equal(both.length, 1);
  assert.equal(both[0].id, 'attention-head-pruning');
  assert.equal(both[0].atMs, times[4], '5th sample: 860 is only 14% down, 7th is not slow');
  assert.match(both[0].detail, /16%/);
});

test('missing samples never trigger an insight', () => {
  const nulls = times.map(() => null);
  assert.deepEqual(
    computeInsights({ times, rps: nulls, gpuActive: nulls, p99Seconds: nulls, tokensPerSecond: nulls }),
    []
  );
});
