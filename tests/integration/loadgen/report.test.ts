/**
 * The run record, client side: `hopscope-load` registers its run with the proxy, sends heartbeats, posts its finish
 * (every body checked against contract/runs.ts by a real HTTP server), refuses a reused run id, keeps running when
 * the proxy is down and spools what it could not deliver (`--resend` delivers it), retries a finish while the
 * database is down, gates on a baseline run, and posts an interrupted run as aborted.
 * (The end-to-end check against the real proxy comes with the proxy's run routes.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ClientSummary } from '../../../contract/runs';
import { sketchSummary } from '../../../contract/sketch';
import { main, parseCli, type CliPlan } from '../../../loadgen/src/cli';
import { runSession } from '../../../loadgen/src/load/session';
import { SpoolRecord } from '../../../loadgen/src/report/spool';
import { recordOf, startContractProxy, type ContractProxy } from './contract-proxy';
import { startScriptedLlm, type ScriptedLlm } from './scripted-llm';
import { freePort } from './support';

interface Ran {
  code: number;
  out: string;
  err: string;
  ms: number;
}

describe("hopscope-load and the proxy's run API", () => {
  let llm: ScriptedLlm;
  let proxy: ContractProxy;
  let dir: string;
  const TOKEN = 'test-token-1';

  before(async () => {
    llm = await startScriptedLlm();
    proxy = await startContractProxy({ token: TOKEN });
    dir = mkdtempSync(join(tmpdir(), 'lg-report-'));
  });
  after(async () => {
    await llm.close();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (
    args: string[],
    o: { report?: string; env?: Record<string, string>; signal?: AbortSignal } = {}
  ): Promise<Ran> => {
    let out = '',
      err = '';
    const t0 = Date.now();
    const code = await main(
      [
        '--target',
        llm.url,
        '--backend',
        'none',
        '--arrivals',
        'uniform',
        '--quiet',
        '--metrics',
        'none',
        '--spool-dir',
        dir,
        '--report',
        o.report ?? proxy.url,
        ...args,
      ],
      (s) => {
        out += s;
      },
      (s) => {
        err += s;
      },
      { env: { HOPSCOPE_PROXY_TOKEN: TOKEN, ...o.env }, signal: o.signal }
    );
    return { code, out, err, ms: Date.now() - t0 };
  };
  const json = (r: Ran) => JSON.parse(r.out);

  it("registers the run, beats every 5 s, posts the finish with every request's trace id; all as the contract says", async () => {
    const r = await run(['--run-id', 'rep-ok', '--rps', '4', '--duration', '6s', '--threshold', 'error_rate<0.01']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(proxy.invalid, []);
    const stored = proxy.runs.get('rep-ok')!;
    assert.equal(stored.registrations.length, 1);
    const [reg] = stored.registrations;
    assert.equal(reg.scenario, 'ad-hoc');
    assert.equal(reg.target, new URL('/v1/chat/completions', llm.url).toString());
    assert.deepEqual(reg.thresholds, ['error_rate<0.01']);
    assert.ok(stored.heartbeats.length >= 1, 'a heartbeat within 6 s');
    assert.ok(stored.heartbeats.every((h) => h.workerId === reg.workerId && h.completed <= h.sent));
    assert.equal(stored.finishes.length, 1);
    const [fin] = stored.finishes;
    const summary = json(r);
    assert.equal(summary.runId, 'rep-ok');
    assert.equal(fin.status, 'passed');
    assert.equal(fin.summary.sent, summary.sent);
    assert.equal(fin.summary.sent, 24);
    assert.equal(fin.summary.untraced, 0);
    assert.equal(fin.thresholds[0].pass, true);
    // The slowest requests carry the trace ids the server answered in traceresponse.
    assert.ok(fin.slowest.length > 0);
    for (const q of fin.slowest) {
      assert.equal(q.traceIdSource, 'traceresponse');
      assert.ok(llm.traceIds.has(q.traceId!), `${q.traceId} was issued by the server`);
      // The server's traceresponse said sampled (flags 01): the run page may link to it.
      assert.equal(q.traceSampled, true);
    }
    assert.deepEqual(summary.traceIds, { sent: 0, traceresponse: 24, none: 0, sampled: 24 });
    // Mergeable sketches of e2e and TTFT: every value, percentiles within the sketch's accuracy of the exact ones.
    const { e2e, ttft } = fin.summary.sketches!;
    assert.equal(e2e.count, fin.summary.latencyMs.count);
    assert.equal(ttft.count, fin.summary.ttftMs.count);
    for (const [sk, exact] of [
      [e2e, fin.summary.latencyMs],
      [ttft, fin.summary.ttftMs],
    ] as const) {
      const read = sketchSummary(sk);
      for (const q of ['p50', 'p99'] as const)
        assert.ok(
          Math.abs(read[q]! - exact[q]!) <= exact[q]! * sk.alpha + 1e-6,
          `${q}: sketch ${read[q]} vs exact ${exact[q]}`
        );
    }
    assert.ok(proxy.auth.every((a) => a === `Bearer ${TOKEN}`));
    // --json -: the JSON alone on stdout, the table on stderr.
    assert.match(r.err, /TTFT ms p50 \/ p99/);
    assert.equal(llm.baggage.at(-1), 'hopscope.run_id=rep-ok,hopscope.load_test=true,hopscope.scenario=ad-hoc');
  });

  it('a reused run id exits 2 before sending anything; --join adds this worker to the run', async () => {
    const before = llm.requests;
    const dup = await run(['--run-id', 'rep-ok', '--rps', '4', '--duration', '1s']);
    assert.equal(dup.code, 2);
    assert.match(dup.err, /run id rep-ok is already used on the proxy .*--join/);
    assert.equal(llm.requests, before, 'nothing was sent');
    const join = await run(['--run-id', 'rep-ok', '--join', '--worker-id', 'second', '--rps', '4', '--duration', '1s']);
    assert.equal(join.code, 0, join.err);
    const stored = proxy.runs.get('rep-ok')!;
    assert.deepEqual(
      stored.registrations.map((x) => x.join ?? false),
      [false, true]
    );
    assert.deepEqual(stored.finishes.map((f) => f.workerId).at(-1), 'second');
  });

  it('a registration whose answer was lost is sent again as it was: the proxy takes it as a retry, not a reused id', async () => {
    proxy.loseRegistrationAnswers(1);
    const r = await run(['--run-id', 'rep-lost', '--rps', '4', '--duration', '1s']);
    assert.equal(r.code, 0, r.err);
    const stored = proxy.runs.get('rep-lost')!;
    assert.equal(stored.registrations.length, 1);
    assert.equal(stored.finishes.length, 1);
    assert.doesNotMatch(r.err, /already used|not delivered/);
  });

  it('a wrong token exits 2 with what to do', async () => {
    const r = await run(['--run-id', 'rep-token', '--duration', '1s'], { env: { HOPSCOPE_PROXY_TOKEN: 'wrong' } });
    assert.equal(r.code, 2);
    assert.match(r.err, /refused the token .*HOPSCOPE_PROXY_TOKEN/);
  });

  it('the proxy down: one warning, the run goes on, its record is spooled; --resend delivers it later', async () => {
    const port = await freePort();
    const down = `http://127.0.0.1:${port}`;
    const r = await run(['--run-id', 'rep-spool', '--rps', '4', '--duration', '1s', '--report-retry', '1s'], {
      report: down,
    });
    assert.equal(r.code, 0, r.err);
    assert.equal(json(r).sent, 4, 'the run went on');
    assert.equal((r.err.match(/the run goes on/g) ?? []).length, 1, r.err);
    const m = /send it later with: hopscope-load --resend (\S+) --report (\S+)/.exec(r.err);
    assert.ok(m, r.err);
    const file = m[1];
    assert.equal(m[2], down, 'the hint names the proxy to deliver to');
    const rec = SpoolRecord.parse(JSON.parse(readFileSync(file, 'utf8')));
    assert.equal(rec.registration.runId, 'rep-spool');
    assert.equal(rec.finish.summary.sent, 4);
    assert.equal(json(r).report.spoolFile, file);
    // The proxy is back (a new one on that port): the spooled run arrives whole.
    const back = await startContractProxy({ token: TOKEN, port });
    try {
      let out = '',
        err = '';
      // A spool file naming another proxy (a file from anywhere): the token is not sent there, with or without
      // HOPSCOPE_PROXY_URL naming the real one; the file is kept. Only --report names where it goes.
      const thief = await startContractProxy({ token: TOKEN });
      const forged = join(dir, 'forged.json');
      writeFileSync(forged, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), proxyUrl: thief.url }));
      try {
        for (const env of [
          { HOPSCOPE_PROXY_TOKEN: TOKEN },
          { HOPSCOPE_PROXY_TOKEN: TOKEN, HOPSCOPE_PROXY_URL: down },
        ]) {
          let refusal = '';
          const c = await main(
            ['--resend', forged],
            () => {},
            (s) => {
              refusal += s;
            },
            { env }
          );
          assert.equal(c, 2, refusal);
          assert.match(refusal, /the token is sent only to the configured proxy.*--report http:\/\/127\.0\.0\.1:\d+/);
        }
        assert.equal(thief.runs.size, 0, 'nothing reached the proxy only the file names');
        assert.equal(existsSync(forged), true, 'the refused file is kept');
      } finally {
        await thief.close();
      }
      const code = await main(
        ['--resend', file, '--report', m[2]],
        (s) => {
          out += s;
        },
        (s) => {
          err += s;
        },
        { env: { HOPSCOPE_PROXY_TOKEN: TOKEN } }
      );
      assert.equal(code, 0, err);
      assert.match(out, /delivered/);
      const stored = back.runs.get('rep-spool')!;
      assert.equal(stored.registrations.length, 1);
      assert.equal(stored.finishes[0].summary.sent, 4);
      assert.deepEqual(back.invalid, []);
      assert.equal(existsSync(file), false, 'a delivered spool file is removed');
    } finally {
      await back.close();
    }
    let err = '';
    assert.equal(
      await main(
        ['--resend', file],
        () => {},
        (s) => {
          err += s;
        }
      ),
      2
    );
    assert.match(err, /cannot read spool file .*no such file/);
  });

  it('the database down at the end: the finish is retried (Retry-After honoured) and delivered', async () => {
    proxy.fail('finish', 2, 503, '1');
    const r = await run(['--run-id', 'rep-503', '--rps', '4', '--duration', '1s']);
    assert.equal(r.code, 0, r.err);
    const stored = proxy.runs.get('rep-503')!;
    assert.equal(stored.finishes.length, 1);
    assert.match(r.err, /finish not delivered yet \(503: the database is unavailable\); retrying in 1\.\d s/);
    assert.equal(json(r).report.delivered, true);
    assert.ok(r.ms >= 1000 + 1600, `two Retry-After: 1 waits (${r.ms} ms)`);
  });

  it('a finish still refused after --report-retry is spooled, never dropped', async () => {
    proxy.fail('finish', 1000, 503);
    try {
      const r = await run(['--run-id', 'rep-503-long', '--rps', '4', '--duration', '1s', '--report-retry', '2s']);
      assert.equal(r.code, 0);
      assert.match(r.err, /not delivered .*hopscope-load --resend /s);
      assert.equal(json(r).report.delivered, false);
      assert.ok(existsSync(json(r).report.spoolFile));
    } finally {
      proxy.fail('finish', 0, 503);
    }
  });

  it('a baseline run gates CI: exit 1 with what regressed and by how much; an unknown baseline exits 2', async () => {
    const first = await run(['--run-id', 'rep-base-src', '--rps', '4', '--duration', '1s']);
    const src = ClientSummary.parse(json(first));
    // A baseline ten times faster than anything this server can do.
    const fast = { ...src, latencyMs: { ...src.latencyMs, p99: src.latencyMs.p99! / 10 } };
    proxy.records.set('rep-base', recordOf('rep-base', 'ad-hoc', fast));
    const r = await run([
      '--run-id',
      'rep-gated',
      '--rps',
      '4',
      '--duration',
      '1s',
      '--baseline-run',
      'rep-base',
      '--max-regression',
      'p99_ms:+10%,error_rate:+0.01',
    ]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /p99_ms rose \d+(\.\d)?% \(.+ → .+\), allowed \+10%: REGRESSED/);
    assert.match(r.err, /error_rate unchanged .*: pass/);
    assert.match(r.err, /regressed against baseline rep-base: p99_ms/);
    const stored = proxy.runs.get('rep-gated')!;
    assert.equal(stored.registrations[0].baselineRunId, 'rep-base');
    assert.equal(stored.finishes[0].status, 'failed');
    assert.equal(stored.finishes[0].regressions.find((x) => x.metric === 'p99_ms')?.pass, false);

    const before = llm.requests;
    const unknown = await run([
      '--rps',
      '4',
      '--duration',
      '1s',
      '--baseline-run',
      'no-such-run',
      '--max-regression',
      'p99_ms:+10%',
    ]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown baseline run no-such-run/);
    assert.equal(llm.requests, before, 'nothing was sent');

    // A JSON summary file works as a baseline too.
    const file = join(dir, 'baseline.json');
    writeFileSync(file, first.out);
    const byFile = await run([
      '--rps',
      '4',
      '--duration',
      '1s',
      '--baseline-run',
      file,
      '--max-regression',
      'p99_ms:+1000%',
      '--report',
      'none',
    ]);
    assert.equal(byFile.code, 0, byFile.err);
    assert.equal(json(byFile).baseline.runId, 'rep-base-src');
  });

  it('the proxy down mid-run: heartbeats fail (said once), recover, and the finish arrives', async () => {
    const plan = parseCli(
      [
        '--target',
        llm.url,
        '--backend',
        'none',
        '--quiet',
        '--metrics',
        'none',
        '--report',
        proxy.url,
        '--run-id',
        'rep-mid',
        '--rps',
        '5',
        '--duration',
        '4s',
        '--arrivals',
        'uniform',
      ],
      { HOPSCOPE_PROXY_TOKEN: TOKEN }
    ) as CliPlan;
    // Heartbeats every 300 ms instead of 5 s, so that the outage spans several of them.
    plan.report!.heartbeatMs = 300;
    setTimeout(() => proxy.setDown(true), 1000);
    setTimeout(() => proxy.setDown(false), 2200);
    let out = '',
      err = '';
    const code = await runSession(plan, {
      out: (x) => {
        out += x;
      },
      err: (x) => {
        err += x;
      },
      signal: new AbortController().signal,
    });
    assert.equal(code, 0, err);
    assert.equal((err.match(/heartbeat to the proxy failed/g) ?? []).length, 1, err);
    assert.match(err, /heartbeats reach the proxy .* again/);
    const stored = proxy.runs.get('rep-mid')!;
    const gap = Math.max(...stored.heartbeats.slice(1).map((h, i) => h.atMs - stored.heartbeats[i].atMs));
    assert.ok(gap >= 1000, `no heartbeat arrived during the outage (largest gap ${gap} ms)`);
    assert.equal(stored.finishes.length, 1);
    assert.equal(stored.finishes[0].summary.sent, JSON.parse(out).sent);
  });

  it('an interrupted run exits 130 and is posted as aborted', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 1200);
    const r = await run(['--run-id', 'rep-int', '--rps', '5', '--duration', '20s'], { signal: ac.signal });
    assert.equal(r.code, 130, r.err);
    assert.ok(r.ms < 8000, `stopped soon after the interrupt (${r.ms} ms)`);
    const fin = proxy.runs.get('rep-int')!.finishes[0];
    assert.equal(fin.status, 'aborted');
    assert.ok(fin.summary.sent > 0 && fin.summary.sent < 20, `${fin.summary.sent} sent`);
    assert.equal(json(r).status, 'aborted');
  });
});
