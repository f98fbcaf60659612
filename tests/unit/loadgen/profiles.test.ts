import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { arrivals, expectedArrivals, rateAt, validateProfile, type Profile } from '../../../loadgen/src/load/profiles';

const base: Profile = { kind: 'constant', rps: 100, durationS: 10, arrivals: 'uniform' };

describe('load profiles', () => {
  it('constant uniform: exactly rps × duration arrivals, evenly spaced', () => {
    const ts = [...arrivals(base, 1)];
    assert.ok(Math.abs(ts.length - 1000) <= 1, `${ts.length}`);
    assert.ok(Math.abs(ts[1] - ts[0] - 0.01) < 1e-9);
  });

  it('poisson arrivals are seeded and average the rate', () => {
    const p: Profile = { ...base, arrivals: 'poisson', durationS: 20 };
    const a = [...arrivals(p, 7)];
    const b = [...arrivals(p, 7)];
    assert.deepEqual(a, b);
    assert.ok(Math.abs(a.length - 2000) < 150, `${a.length}`);
  });

  it('ramp goes from start to end rate', () => {
    const p: Profile = { ...base, kind: 'ramp', startRps: 10, rps: 110 };
    assert.equal(rateAt(p, 0), 10);
    assert.equal(rateAt(p, 5), 60);
    const ts = [...arrivals(p, 1)];
    const firstHalf = ts.filter((t) => t < 5).length;
    assert.ok(firstHalf < ts.length - firstHalf, 'more arrivals in the second half');
    assert.ok(Math.abs(ts.length - expectedArrivals(p)) < 20);
  });

  it('step raises the rate at each step edge, capped', () => {
    const p: Profile = { ...base, kind: 'step', startRps: 10, stepRps: 20, stepEveryS: 2, rps: 50 };
    assert.deepEqual(
      [0, 2, 4, 6, 8].map((t) => rateAt(p, t)),
      [10, 30, 50, 50, 50]
    );
    const ts = [...arrivals(p, 1)];
    assert.ok(Math.abs(ts.filter((t) => t < 2).length - 20) <= 1);
    assert.ok(Math.abs(ts.filter((t) => t >= 2 && t < 4).length - 60) <= 1);
  });

  it('spike applies the spike rate only inside its window', () => {
    const p: Profile = { ...base, kind: 'spike', rps: 10, spikeRps: 200, spikeAtS: 4, spikeForS: 2 };
    const ts = [...arrivals(p, 1)];
    const inSpike = ts.filter((t) => t >= 4 && t < 6).length;
    assert.ok(Math.abs(inSpike - 400) <= 2, `${inSpike}`);
    assert.ok(Math.abs(ts.filter((t) => t < 4).length - 40) <= 1);
  });

  it('rejects negative, zero and absurd values with one clear message', () => {
    assert.throws(() => validateProfile({ ...base, rps: -5 }), /rps must be > 0/);
    assert.throws(() => validateProfile({ ...base, rps: 1e9 }), /rps must be ≤ 100000/);
    assert.throws(() => validateProfile({ ...base, durationS: 0 }), /duration must be > 0/);
    assert.throws(() => validateProfile({ ...base, kind: 'ramp' }), /start-rps is required/);
    assert.throws(
      () => validateProfile({ ...base, kind: 'spike', spikeRps: 10, spikeAtS: 50, spikeForS: 1 }),
      /spike-at .* inside the run/
    );
    assert.throws(() => validateProfile({ ...base, kind: 'wave' as Profile['kind'] }), /unknown profile "wave"/);
  });
});
