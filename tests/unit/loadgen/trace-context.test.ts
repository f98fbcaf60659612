/**
 * hopscope-load's traceparent (issue 19, item 6): sampled (flags 01) for the share `--trace-sample` asks, decided by
 * the trace id's low 32 bits as the chain's ratio samplers decide (traceIdFraction), and the default share: every
 * request up to 200 req/s, 200 / peak above.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { defaultTraceSample, newTraceparent, TRACE_ALL_UP_TO_RPS } from '../../../loadgen/src/load/trace-context';
import { traceIdFraction } from '../../../loadgen/src/telemetry/adaptive-sampler';

const TP = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe('the driver’s traceparent', () => {
  it('ratio 1 (the default): every traceparent sampled; ratio 0: none', () => {
    for (let i = 0; i < 500; i++) {
      const all = newTraceparent();
      assert.match(all.header, TP);
      assert.equal(all.header.slice(-2), '01');
      assert.equal(all.sampled, true);
      assert.equal(TP.exec(all.header)![1], all.traceId);
      const none = newTraceparent(0);
      assert.equal(none.header.slice(-2), '00');
      assert.equal(none.sampled, false);
    }
  });

  it('a ratio samples that share, the flag agreeing with the id as the chain’s samplers read it', () => {
    const n = 20_000;
    let sampled = 0;
    for (let i = 0; i < n; i++) {
      const tp = newTraceparent(0.25);
      assert.equal(tp.sampled, traceIdFraction(tp.traceId) < 0.25);
      assert.equal(tp.header.endsWith('-01'), tp.sampled);
      if (tp.sampled) sampled++;
    }
    // Binomial(20,000, 0.25): sd ≈ 61; 6 sd either side.
    assert.ok(Math.abs(sampled - n / 4) < 370, `${sampled} of ${n} sampled`);
  });

  it('the default share: all up to 200 req/s, 200 / peak above', () => {
    assert.equal(TRACE_ALL_UP_TO_RPS, 200);
    assert.equal(defaultTraceSample(5), 1);
    assert.equal(defaultTraceSample(200), 1);
    assert.equal(defaultTraceSample(400), 0.5);
    assert.equal(defaultTraceSample(2000), 0.1);
  });
});
