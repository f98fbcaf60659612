/** The runs service on PGlite and a real PostgreSQL: registration rules, heartbeats, distributed merge, timeouts, list, outages. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunList, RunRecord } from '../../../contract';
import { RunsError } from '../../../backend-proxy/src/runs/errors';
import { RunsService } from '../../../backend-proxy/src/runs/service';
import { forEachEngine, quietLog } from './engines';
import { finish, latencies, registration } from './run-fixtures';

const code =
  (c: RunsError['code'], re?: RegExp) =>
  (err: unknown): boolean =>
    err instanceof RunsError && err.code === c && (!re || re.test(err.message));

/** A clock the test moves. */
function clock(start = 1_750_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

forEachEngine((e) => {
  test('register: a new run id; the same registration again is a retry; a reused id is a conflict; join adds a worker', async () => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    const rec = await runs.register(registration('r-1'));
    assert.equal(RunRecord.safeParse(rec).success, true);
    assert.equal(rec.status, 'running');
    assert.equal(rec.workers, 1);
    assert.deepEqual(rec.options, registration('r-1').options);
    assert.equal(rec.summary, null);
    assert.equal(
      (await runs.register(registration('r-1'))).workers,
      1,
      'a retried registration is not a second worker'
    );

    await assert.rejects(
      runs.register(registration('r-1', 'w2')),
      code('conflict', /run id "r-1" is already used .*join: true/)
    );
    await assert.rejects(
      runs.register(registration('r-1', 'w1', { startMs: 1_749_000_000_000 })),
      code('conflict', /worker "w1" registered it with other settings/)
    );
    await assert.rejects(
      runs.register(registration('r-1', 'w2', { join: true, scenario: 'other' })),
      code('conflict', /runs scenario "steady-chat", not "other"/)
    );
    const joined = await runs.register(registration('r-1', 'w2', { join: true, startMs: 1_749_999_999_000 }));
    assert.equal(joined.workers, 2);
    assert.equal(joined.startMs, 1_749_999_999_000, 'the run starts with its first worker');
    // Every worker may say join: the first one creates the run.
    assert.equal((await runs.register(registration('r-2', 'w1', { join: true }))).workers, 1);

    await assert.rejects(runs.register({ ...registration('r-3'), runId: 'bad id!' }), code('invalid', /runId/));
    await assert.rejects(
      runs.register(registration('r-3', 'w1', { options: { blob: 'x'.repeat(200_000) } })),
      code('too_large', /over the 131072-byte limit/)
    );
  });

  test('heartbeats: live totals over workers, never moving back; unknown runs and workers are named; scrape targets', async () => {
    const { db } = await e.fresh();
    const c = clock();
    const runs = new RunsService({ db, log: quietLog, now: c.now });
    await runs.register(registration('hb', 'w1', { metricsUrl: 'http://10.1.2.3:9464/metrics' }));
    await runs.register(registration('hb', 'w2', { join: true }));
    c.advance(1000);
    await runs.heartbeat('hb', { workerId: 'w1', sent: 100, completed: 90, errors: 2, inFlight: 8 });
    await runs.heartbeat('hb', { workerId: 'w2', sent: 50, completed: 45, errors: 1, inFlight: 5 });
    c.advance(1000);
    const ack = await runs.heartbeat('hb', { workerId: 'w1', sent: 80, completed: 70, errors: 1, inFlight: 3 }); // an old one, late
    assert.equal(ack.lastHeartbeatMs, c.now());
    const item = (await runs.list()).runs.find((r) => r.runId === 'hb')!;
    assert.deepEqual(item.live, { sent: 150, completed: 135, errors: 3, inFlight: 8, lastHeartbeatMs: c.now() });
    assert.deepEqual(await runs.scrapeTargets(), [
      {
        targets: ['10.1.2.3:9464'],
        labels: {
          __scheme__: 'http',
          __metrics_path__: '/metrics',
          run_id: 'hb',
          scenario: 'steady-chat',
          worker_id: 'w1',
        },
      },
    ]);

    await assert.rejects(
      runs.heartbeat('nope', { workerId: 'w1', sent: 1, completed: 1, errors: 0, inFlight: 0 }),
      code('not_found', /no run "nope": register it first/)
    );
    await assert.rejects(
      runs.heartbeat('hb', { workerId: 'w9', sent: 1, completed: 1, errors: 0, inFlight: 0 }),
      code('not_found', /worker "w9" is not part of run "hb"/)
    );
    await assert.rejects(
      runs.heartbeat('hb', { workerId: 'w1', sent: -1, completed: 1, errors: 0, inFlight: 0 } as never),
      code('invalid', /heartbeat: sent/)
    );
  });

  test('one worker finishes: passed with its exact summary; a retried finish is the same; a different one is a conflict', async () => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    await runs.register(registration('one'));
    const fin = finish('w1', latencies(500, 300));
    const rec = await runs.finish('one', fin);
    assert.equal(RunRecord.safeParse(rec).success, true);
    assert.equal(rec.status, 'passed');
    assert.deepEqual(rec.summary, fin.summary);
    assert.equal(rec.merge, null);
    assert.equal(rec.e2eP99Ms, fin.summary.latencyMs.p99);
    assert.equal(rec.errorRate, 0);
    assert.equal(rec.endMs, fin.endMs);
    assert.deepEqual(rec.thresholds, fin.thresholds);
    assert.deepEqual(rec.slowest, fin.slowest);
    assert.equal(rec.live, null);
    assert.deepEqual(await runs.finish('one', fin), rec);
    await assert.rejects(
      runs.finish('one', { ...fin, endMs: fin.endMs + 1 }),
      code('conflict', /already finished run "one" \(passed\) with a different report/)
    );
    await assert.rejects(
      runs.heartbeat('one', { workerId: 'w1', sent: 1, completed: 1, errors: 0, inFlight: 0 }),
      code('conflict', /has ended \(passed\)/)
    );
    await assert.rejects(
      runs.register(registration('one', 'w2', { join: true })),
      code('conflict', /has ended \(passed\): a worker cannot join/)
    );
    await assert.rejects(
      runs.finish('one', {
        ...fin,
        summary: { ...fin.summary, notes: Array.from({ length: 100 }, () => 'n'.repeat(30_000)) },
      }),
      code('too_large')
    );
  });

  test('three workers add up: counts exact, percentiles from merged sketches (within 1%), failed if one failed', async () => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    const parts = [latencies(2000, 200, 1), latencies(1500, 600, 2), latencies(1000, 1200, 3)];
    for (const [i] of parts.entries()) await runs.register(registration('dist', `w${i + 1}`, { join: true }));
    const fins = parts.map((p, i) =>
      finish(`w${i + 1}`, p, { errors: i, endMs: 1_750_000_060_000 + i, status: i === 2 ? 'failed' : 'passed' })
    );
    assert.equal((await runs.finish('dist', fins[0])).status, 'running', 'the run goes on while workers run');
    await runs.finish('dist', fins[1]);
    const rec = await runs.finish('dist', fins[2]);
    assert.equal(rec.status, 'failed');
    assert.equal(rec.workers, 3);
    assert.equal(rec.merge?.workers, 3);
    assert.equal(rec.merge?.percentiles, 'bucketed');
    const all = parts.flat().sort((a, b) => a - b);
    const s = rec.summary!;
    assert.equal(s.sent, all.length + 3);
    assert.equal(s.completed, all.length);
    assert.equal(s.errors.total, 3);
    assert.equal(s.latencyMs.count, all.length);
    assert.equal(s.latencyMs.max, all.at(-1));
    const p99 = all[Math.ceil(0.99 * all.length) - 1];
    assert.ok(Math.abs(s.latencyMs.p99! - p99) / p99 <= 0.0101, `merged p99 ${s.latencyMs.p99} vs exact ${p99}`);
    assert.equal(rec.e2eP99Ms, s.latencyMs.p99);
    assert.equal(rec.errors, 3);
    assert.equal(rec.endMs, 1_750_000_060_002);
    assert.equal(rec.slowest.length, 60);
    assert.equal(rec.slowest[0].e2eMs, all.at(-1));
    assert.equal(rec.thresholds.length, 1);
    assert.equal(
      rec.thresholds[0].pass,
      fins.every((f) => f.thresholds[0].pass)
    );
  });

  test('a worker that stops sending heartbeats is aborted, with the reason; a late finish is still kept', async () => {
    const { db } = await e.fresh();
    const c = clock();
    const runs = new RunsService({ db, log: quietLog, now: c.now, heartbeatTimeoutMs: 30_000 });
    await runs.register(registration('hb-lost', 'w1', { join: true }));
    await runs.register(registration('hb-lost', 'w2', { join: true }));
    await runs.finish('hb-lost', finish('w1', latencies(300, 200)));
    c.advance(29_000);
    assert.deepEqual(await runs.sweep(), { abortedWorkers: 0, endedRuns: 0 }, 'not yet: 29 s');
    c.advance(2_000);
    assert.deepEqual(await runs.sweep(), { abortedWorkers: 1, endedRuns: 1 });
    const rec = await runs.get('hb-lost');
    assert.equal(rec.status, 'aborted');
    assert.match(rec.abortReason!, /no heartbeat from worker w2 since 2025-06-15T15:06:40\.000Z \(timeout 30 s\)/);
    assert.equal(rec.summary?.completed, 300, 'what the finished worker measured is kept');
    await assert.rejects(
      runs.heartbeat('hb-lost', { workerId: 'w2', sent: 1, completed: 1, errors: 0, inFlight: 0 }),
      code('conflict', /has ended \(aborted: no heartbeat/)
    );
    const late = await runs.finish('hb-lost', finish('w2', latencies(200, 250)));
    assert.equal(late.status, 'passed', 'both workers reported after all');
    assert.equal(late.summary?.completed, 500);
    assert.equal(late.abortReason, null);
    assert.deepEqual(await runs.sweep(), { abortedWorkers: 0, endedRuns: 0 });
  });

  test('after a start (or an outage) the sweep waits a whole timeout before aborting anyone', async () => {
    const { db } = await e.fresh();
    const c = clock();
    const before = new RunsService({ db, log: quietLog, now: c.now, heartbeatTimeoutMs: 10_000 });
    await before.register(registration('quiet'));
    c.advance(60_000); // a proxy restart much longer than the timeout: every heartbeat is old now
    const restarted = new RunsService({ db, log: quietLog, now: c.now, heartbeatTimeoutMs: 10_000 });
    assert.deepEqual(await restarted.sweep(), { abortedWorkers: 0, endedRuns: 0 });
    c.advance(5_000);
    await restarted.heartbeat('quiet', { workerId: 'w1', sent: 5, completed: 5, errors: 0, inFlight: 0 }); // heard in time
    c.advance(6_000);
    assert.equal((await restarted.sweep()).abortedWorkers, 0);
    c.advance(10_000);
    assert.equal((await restarted.sweep()).abortedWorkers, 1);
  });

  test('the list: 1,000 stored runs, newest first, by window, scenario and status, paged', async (t) => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    const fin = finish('w1', latencies(200, 300));
    const t0 = 1_750_000_000_000;
    const seed = async (i: number): Promise<void> => {
      const runId = `list-${String(i).padStart(4, '0')}`;
      await runs.register(
        registration(runId, 'w1', { startMs: t0 + i * 60_000, scenario: i % 2 ? 'burst' : 'steady-chat' })
      );
      if (i % 10)
        await runs.finish(runId, { ...fin, endMs: t0 + i * 60_000 + 30_000, status: i % 7 ? 'passed' : 'failed' });
    };
    const started = performance.now();
    for (let i = 0; i < 1000; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => seed(i + j)));
    t.diagnostic(`seeded 1,000 runs (register + finish) in ${(performance.now() - started).toFixed(0)} ms`);

    const page = await runs.list({ limit: 1000 });
    assert.equal(RunList.safeParse(page).success, true);
    assert.equal(page.total, 1000);
    assert.equal(page.runs.length, 1000);
    assert.equal(page.runs[0].runId, 'list-0999');
    assert.ok(page.runs.every((r, i) => i === 0 || page.runs[i - 1].startMs >= r.startMs));
    assert.equal(page.runs.filter((r) => r.status === 'running').length, 100);
    const done = page.runs.find((r) => r.runId === 'list-0001')!;
    assert.equal(done.e2eP99Ms, fin.summary.latencyMs.p99);
    assert.equal(done.durationS, fin.summary.durationS);
    assert.equal(done.live, null);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      await runs.list({ limit: 1000 });
      warm.push(performance.now() - s);
    }
    t.diagnostic(`list of 1,000 warm: ${warm.map((x) => x.toFixed(1)).join(', ')} ms`);

    // Window [t0 + 100 min, t0 + 199 min]: runs that overlap it (ended ones end 30 s after they start).
    const win = await runs.list({ from: t0 + 100 * 60_000, to: t0 + 199 * 60_000, limit: 1000 });
    const expect = page.runs.filter(
      (r) => r.startMs <= t0 + 199 * 60_000 && (r.endMs === null || r.endMs >= t0 + 100 * 60_000)
    );
    assert.equal(win.total, expect.length);
    assert.deepEqual(
      win.runs.map((r) => r.runId),
      expect.map((r) => r.runId)
    );
    assert.equal((await runs.list({ scenario: 'burst', limit: 1000 })).total, 500);
    const failed = await runs.list({ status: 'failed', limit: 1000 });
    assert.equal(failed.total, page.runs.filter((r) => r.status === 'failed').length);
    const p2 = await runs.list({ limit: 100, offset: 100 });
    assert.equal(p2.total, 1000);
    assert.deepEqual(
      p2.runs.map((r) => r.runId),
      page.runs.slice(100, 200).map((r) => r.runId)
    );

    await assert.rejects(runs.list({ limit: 5000 }), code('invalid', /limit must be a whole number 1\.\.1000/));
    await assert.rejects(runs.list({ from: 10, to: 5 }), code('invalid', /from \(10\) and to \(5\)/));
    await assert.rejects(runs.list({ status: 'weird' as never }), code('invalid', /status/));
    await assert.rejects(runs.get('list-9999'), code('not_found', /no run "list-9999"/));
  });

  if (e.kind === 'postgres') {
    test('PostgreSQL down mid-run: calls answer unavailable (fast, no crash), retries succeed after, nothing acknowledged is lost', async () => {
      const { db } = await e.fresh();
      const runs = new RunsService({ db, log: quietLog });
      await runs.register(registration('outage'));
      await runs.heartbeat('outage', { workerId: 'w1', sent: 10, completed: 10, errors: 0, inFlight: 0 });
      await e.server!.stop();
      try {
        const t0 = Date.now();
        await assert.rejects(
          runs.heartbeat('outage', { workerId: 'w1', sent: 20, completed: 20, errors: 0, inFlight: 0 }),
          (err: unknown) =>
            err instanceof RunsError &&
            err.code === 'unavailable' &&
            err.httpStatus === 503 &&
            err.retryAfterS! > 0 &&
            /runs database is unavailable .*retry/.test(err.message)
        );
        const fin = finish('w1', latencies(100, 300));
        await assert.rejects(runs.finish('outage', fin), code('unavailable'));
        await assert.rejects(runs.register(registration('posted-while-down')), code('unavailable'));
        await assert.rejects(runs.list(), code('unavailable'));
        assert.equal((await db.health()).ok, false);
        assert.ok(Date.now() - t0 < 15_000, 'answers come fast, not after long hangs');
      } finally {
        await e.server!.start();
      }
      // The client retries what failed.
      const fin = finish('w1', latencies(100, 300));
      assert.equal((await runs.finish('outage', fin)).status, 'passed');
      assert.equal((await runs.register(registration('posted-while-down'))).status, 'running');
      const rec = await runs.get('outage');
      assert.equal(rec.summary?.completed, 100);
      assert.equal((await db.health()).ok, true);
    });
  }
});
