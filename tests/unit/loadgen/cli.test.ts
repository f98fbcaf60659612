import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HELP,
  main,
  OPTION_NAMES,
  parseCli,
  parseDuration,
  thresholdValue,
  UsageError,
  type CliPlan,
} from '../../../loadgen/src/cli';
import { THRESHOLD_METRICS } from '../../../loadgen/src/load/thresholds';
import { checkThreshold, parseSlo, parseThreshold } from '../../../loadgen/src/load/thresholds';
import { SseParser } from '../../../loadgen/src/shared/sse';
import { tpot } from '../../../loadgen/src/load/stats';

describe('hopscope-load command line', () => {
  it('--help prints usage and exits 0', async () => {
    let out = '';
    assert.equal(
      await main(
        ['--help'],
        (s) => {
          out += s;
        },
        () => {}
      ),
      0
    );
    assert.ok(out.includes('--threshold') && out.includes('spike'));
    assert.equal(out.trim(), HELP.trim());
  });

  it('--help names every option, every metric, the exit codes and a CI recipe', () => {
    for (const o of OPTION_NAMES) assert.ok(HELP.includes(`--${o}`), `--${o} in the help`);
    for (const m of Object.keys(THRESHOLD_METRICS)) assert.ok(HELP.includes(m), m);
    for (const code of ['0 ', '1 ', '2 ', '130 ']) assert.match(HELP, new RegExp(`^  ${code}`, 'm'));
    assert.match(HELP, /CI recipe[\s\S]*--baseline-run[\s\S]*--max-regression/);
    for (const v of [
      'HOPSCOPE_PROXY_URL',
      'HOPSCOPE_PROXY_TOKEN',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_RESOURCE_ATTRIBUTES',
      'OTEL_SERVICE_NAME',
    ])
      assert.ok(HELP.includes(v), v);
  });

  it('--list-scenarios prints the named scenarios with what they do', async () => {
    let out = '';
    assert.equal(
      await main(
        ['--list-scenarios'],
        (s) => {
          out += s;
        },
        () => {},
        { env: {} }
      ),
      0
    );
    assert.match(out, /^single-turn-short\s+Single-turn/m);
    assert.match(out, /^chaos-gpu-oom\s+GPU OOM/m);
  });

  it('an unknown scenario exits 2 with the known ones, no stack trace', async () => {
    let err = '';
    assert.equal(
      await main(
        ['--scenario', 'no-such-one', '--report', 'none'],
        () => {},
        (s) => {
          err += s;
        },
        { env: {} }
      ),
      2
    );
    assert.match(err, /unknown scenario "no-such-one"; available: /);
    assert.doesNotMatch(err, /\n\s+at /, 'no stack trace');
  });

  it('refuses a negative or absurd profile before anything starts (exit 2, clear message)', async () => {
    let err = '';
    const started = Date.now();
    assert.equal(
      await main(
        ['--rps=-3', '--target', 'http://127.0.0.1:9'],
        () => {},
        (s) => {
          err += s;
        }
      ),
      2
    );
    assert.match(err, /rps must be > 0 \(got -3\)/);
    assert.ok(Date.now() - started < 2000, 'no run happened');
    assert.throws(
      () => parseCli(['--rps', '1e9']),
      (e: Error) => e instanceof UsageError && /≤ 100000/.test(e.message)
    );
    assert.throws(() => parseCli(['--duration=-5s']), /duration must be > 0/);
    assert.throws(() => parseCli(['--profile', 'spike', '--rps', '5']), /spike-rps is required/);
    assert.throws(() => parseCli(['--duration', 'soon']), /expected a duration/);
    assert.throws(() => parseCli(['--threshold', 'p98_ms<5']), /unknown threshold metric p98_ms/);
    assert.throws(() => parseCli(['--slo', 'ttft_ms<=0']), /bad SLO/);
    assert.throws(() => parseCli(['--bogus']), /Unknown option/);
    assert.throws(() => parseCli(['--rps', '100000', '--duration', '7d']), /expected a duration/);
    assert.throws(() => parseCli(['--rps', '100000', '--duration', '160h']), /refusing|≤ 604800/);
  });

  it('parses a full spike plan', () => {
    const plan = parseCli([
      '--profile',
      'spike',
      '--rps',
      '10',
      '--spike-rps',
      '50',
      '--spike-at',
      '5s',
      '--spike-for',
      '2s',
      '--duration',
      '1m',
      '--threshold',
      'p99_ms<2000',
      '--slo',
      'ttft_ms<=500,e2e_ms<=3000',
      '--no-stream',
      '--run-id',
      'r1',
    ]) as CliPlan;
    assert.equal(plan.load.profile.durationS, 60);
    assert.equal(plan.load.profile.spikeAtS, 5);
    assert.equal(plan.load.stream, false);
    assert.equal(plan.load.runId, 'r1');
    assert.deepEqual(plan.load.slo, { ttftMs: 500, e2eMs: 3000 });
    assert.equal(plan.thresholds[0].metric, 'p99_ms');
  });

  it('thresholds compare with each operator and fail on missing data', () => {
    assert.equal(checkThreshold(parseThreshold('p99_ms<2000'), 1999), true);
    assert.equal(checkThreshold(parseThreshold('p99_ms<2000'), 2000), false);
    assert.equal(checkThreshold(parseThreshold('error_rate <= 0.01'), 0.01), true);
    assert.equal(checkThreshold(parseThreshold('rps>=100'), 99), false);
    assert.equal(checkThreshold(parseThreshold('ttft_p99_ms<100'), NaN), false);
    assert.deepEqual(parseSlo('tpot_ms<=50'), { tpotMs: 50 });
    assert.equal(parseDuration('d', '250ms'), 0.25);
    assert.equal(parseDuration('d', '2m'), 120);
  });

  it('TPOT = (latency − TTFT) / (tokens − 1)', () => {
    assert.equal(tpot(1100, 100, 11), 100);
    assert.equal(tpot(500, 100, 1), undefined);
  });

  it('thresholdValue reads every metric from a summary', () => {
    const s = {
      sent: 10,
      errors: { total: 1, byKind: {} },
      timeouts: 0,
      latencyMs: { p50: 1, p90: 2, p95: 3, p99: 4 },
      ttftMs: { p50: 5, p99: 6 },
      itlMs: { p99: 7 },
      tpotMs: { p50: 8, p99: 9 },
      rps: { completed: 11 },
      goodput: { rps: 12, ratio: 0.5 },
      schedule: { lateRatio: 0.01 },
    } as never;
    assert.equal(thresholdValue(s, 'p99_ms'), 4);
    assert.equal(thresholdValue(s, 'error_rate'), 0.1);
    assert.equal(thresholdValue(s, 'goodput_ratio'), 0.5);
    assert.equal(thresholdValue(s, 'late_ratio'), 0.01);
  });
});

describe('SSE parser', () => {
  it('reassembles events split across chunks, with CRLF and comments', () => {
    const p = new SseParser();
    const out = [
      ...p.push('data: {"a"'),
      ...p.push(':1}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n'),
      ...p.push('\ndata: [DONE]\n\n'),
    ];
    assert.deepEqual(out, ['{"a":1}', 'x\ny', '[DONE]']);
    assert.deepEqual(p.push('data: tail\n'), []);
    assert.deepEqual(p.flush(), ['tail']);
  });
});
