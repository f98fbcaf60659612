/** Regression gates: `+` bounds a rise, `-` a fall, `%` relative to the baseline, else absolute; missing figures. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientSummary } from '../../../contract/runs';
import { describeRegression, judgeRegressions, parseMaxRegression } from '../../../loadgen/src/load/regression';

const lat = (p99: number | null) => ({ count: 10, mean: p99, p50: p99, p90: p99, p95: p99, p99, max: p99 });
function summary(o: {
  p99?: number | null;
  ttftP99?: number | null;
  errors?: number;
  rps?: number;
  sent?: number;
}): ClientSummary {
  const sent = o.sent ?? 1000;
  return ClientSummary.parse({
    durationS: 60,
    sent,
    completed: sent,
    succeeded: sent - (o.errors ?? 0),
    errors: { total: o.errors ?? 0, byKind: {} },
    timeouts: 0,
    droppedClientSide: 0,
    rps: { targetMean: 10, sent: 10, completed: o.rps ?? 10 },
    latencyMs: lat(o.p99 === undefined ? 100 : o.p99),
    ttftMs: lat(o.ttftP99 === undefined ? 50 : o.ttftP99),
    itlMs: lat(5),
    tpotMs: lat(5),
    outputTokens: 0,
    outputTokensPerS: 0,
    goodput: { good: sent, rps: 10, ratio: 1 },
    schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 1 },
  });
}

describe('--max-regression', () => {
  it('parses relative and absolute rules, refuses bad ones', () => {
    assert.deepEqual(parseMaxRegression('p99_ms:+10%, error_rate:+0.01,rps:-5%'), [
      { metric: 'p99_ms', direction: '+', amount: 10, relative: true, allowed: '+10%' },
      { metric: 'error_rate', direction: '+', amount: 0.01, relative: false, allowed: '+0.01' },
      { metric: 'rps', direction: '-', amount: 5, relative: true, allowed: '-5%' },
    ]);
    assert.throws(() => parseMaxRegression('p99_ms:10%'), /bad regression rule/);
    assert.throws(() => parseMaxRegression('p99:+10%'), /unknown regression metric p99/);
    assert.throws(() => parseMaxRegression(' , '), /at least one rule/);
  });

  it('a rise beyond the allowed share fails, within it passes, and says by how much', () => {
    const rules = parseMaxRegression('p99_ms:+10%,ttft_p99_ms:+15%');
    const [p99, ttft] = judgeRegressions(
      rules,
      summary({ p99: 1000, ttftP99: 200 }),
      summary({ p99: 1234, ttftP99: 229 })
    );
    assert.equal(p99.pass, false);
    assert.equal(p99.delta, 234);
    assert.equal(p99.deltaRatio, 0.234);
    assert.match(describeRegression(p99), /^p99_ms rose 23\.4% \(1000 → 1234\), allowed \+10%: REGRESSED$/);
    assert.equal(ttft.pass, true);
    // Exactly at the bound passes.
    assert.equal(judgeRegressions(rules, summary({ p99: 1000 }), summary({ p99: 1100 }))[0].pass, true);
    // A fall of a latency is never a regression.
    assert.equal(judgeRegressions(rules, summary({ p99: 1000 }), summary({ p99: 500 }))[0].pass, true);
  });

  it('absolute rules on rates, and - for figures that must not fall', () => {
    const [err] = judgeRegressions(
      parseMaxRegression('error_rate:+0.01'),
      summary({ errors: 5 }),
      summary({ errors: 20 })
    );
    assert.equal(err.baseline, 0.005);
    assert.equal(err.actual, 0.02);
    assert.equal(err.pass, false);
    assert.equal(
      judgeRegressions(parseMaxRegression('error_rate:+0.01'), summary({ errors: 5 }), summary({ errors: 14 }))[0].pass,
      true
    );
    const rps = parseMaxRegression('rps:-5%');
    assert.equal(judgeRegressions(rps, summary({ rps: 100 }), summary({ rps: 94 }))[0].pass, false);
    assert.equal(judgeRegressions(rps, summary({ rps: 100 }), summary({ rps: 96 }))[0].pass, true);
    assert.equal(judgeRegressions(rps, summary({ rps: 100 }), summary({ rps: 200 }))[0].pass, true);
  });

  it('a figure the baseline lacks is not judged; one this run lacks fails; a zero baseline allows nothing relative', () => {
    const rules = parseMaxRegression('ttft_p99_ms:+15%');
    const notJudged = judgeRegressions(rules, summary({ ttftP99: null }), summary({ ttftP99: 10 }))[0];
    assert.equal(notJudged.pass, true);
    assert.match(describeRegression(notJudged), /not judged/);
    const lost = judgeRegressions(rules, summary({ ttftP99: 10 }), summary({ ttftP99: null }))[0];
    assert.equal(lost.pass, false);
    assert.match(describeRegression(lost), /no figure/);
    const zero = judgeRegressions(
      parseMaxRegression('error_rate:+10%'),
      summary({ errors: 0 }),
      summary({ errors: 1 })
    )[0];
    assert.equal(zero.pass, false);
    assert.equal(zero.deltaRatio, null);
  });
});
