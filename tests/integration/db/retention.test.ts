/**
 * Retention and deletes of the proxy's state (issue 20, finding 8), on PGlite and a real PostgreSQL: runs (with their
 * workers' reports) and saved answers past the retention are pruned, a running run is kept whatever its age; a run is
 * deleted with its reports (a running one refused); and a run's finish reads the workers' reports once, when the last
 * worker is done, not at every worker's finish.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database, Queryable } from '../../../backend-proxy/src/db/database';
import { listRcaAnswers, saveRcaAnswer } from '../../../backend-proxy/src/db/rca-answers-repo';
import { RunsError } from '../../../backend-proxy/src/runs/errors';
import { RunsService } from '../../../backend-proxy/src/runs/service';
import { RetentionService } from '../../../backend-proxy/src/services/retention';
import { forEachEngine, quietLog } from './engines';
import { finish, latencies, registration } from './run-fixtures';

const DAY = 86_400_000;
const NOW = 1_760_000_000_000;

const workerRows = async (db: Queryable, runId: string): Promise<number> =>
  Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM run_workers WHERE run_id = $1', [runId])).rows[0].n);

/** The database with every statement it is sent recorded (in and out of transactions). */
function recording(db: Database): { db: Database; sql: string[] } {
  const sql: string[] = [];
  const wrap = (q: Queryable): Queryable => ({
    query: (s, p) => {
      sql.push(s);
      return q.query(s, p);
    },
    exec: (s) => q.exec(s),
  });
  const w = wrap(db);
  return {
    sql,
    db: {
      kind: db.kind,
      where: db.where,
      schemaVersion: db.schemaVersion,
      query: w.query,
      exec: w.exec,
      tx: (fn) => db.tx((q) => fn(wrap(q))),
      health: () => db.health(),
      close: () => db.close(),
    },
  };
}

forEachEngine((e) => {
  test('retention: ended runs and saved answers past it are deleted with their reports; running and recent ones kept', async () => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    const old = NOW - 100 * DAY;
    for (const [id, startMs] of [
      ['old-a', old],
      ['old-b', old + DAY],
      ['recent', NOW - 10 * DAY],
    ] as const) {
      await runs.register(registration(id, 'w1', { startMs }));
      await runs.register(registration(id, 'w2', { join: true, startMs }));
      for (const w of ['w1', 'w2'])
        await runs.finish(id, { ...finish(w, latencies(50, 300)), endMs: startMs + 60_000 });
    }
    await runs.register(registration('old-running', 'w1', { startMs: old }));
    await saveRcaAnswer(db, { answer: { tookMs: 1, criticalPath: [], candidates: [], missing: [] } }, old);
    const kept = await saveRcaAnswer(
      db,
      { answer: { tookMs: 2, criticalPath: [], candidates: [], missing: [] } },
      NOW - DAY
    );

    const retention = new RetentionService({ db, log: quietLog, days: 90, now: () => NOW });
    const r = await retention.prune();
    assert.deepEqual({ runs: r.runs, answers: r.answers }, { runs: 2, answers: 1 });
    const left = (await runs.list()).runs.map((x) => x.runId).sort();
    assert.deepEqual(left, ['old-running', 'recent']);
    assert.equal(await workerRows(db, 'old-a'), 0, "the workers' reports went with their run");
    assert.equal(await workerRows(db, 'recent'), 2);
    assert.deepEqual(
      (await listRcaAnswers(db)).map((a) => a.id),
      [kept.id]
    );
    assert.deepEqual(
      { ...(await retention.prune()), beforeMs: 0 },
      { runs: 0, answers: 0, beforeMs: 0 },
      'a second round finds nothing'
    );
  });

  test('delete: a run and its reports go; a running run is refused (409), an unknown one is a 404', async () => {
    const { db } = await e.fresh();
    const runs = new RunsService({ db, log: quietLog });
    await runs.register(registration('done'));
    await runs.finish('done', finish('w1', latencies(50, 300)));
    await runs.register(registration('live'));
    assert.deepEqual(await runs.remove('done'), { runId: 'done', deleted: true });
    assert.equal(await workerRows(db, 'done'), 0);
    await assert.rejects(runs.get('done'), (err: unknown) => err instanceof RunsError && err.code === 'not_found');
    await assert.rejects(
      runs.remove('live'),
      (err: unknown) => err instanceof RunsError && err.code === 'conflict' && /still running/.test(err.message)
    );
    await assert.rejects(runs.remove('nope'), (err: unknown) => err instanceof RunsError && err.code === 'not_found');
    await assert.rejects(runs.remove('bad id!'), (err: unknown) => err instanceof RunsError && err.code === 'invalid');
  });

  test("a run's finish reads the workers' reports once, when the last worker is done", async () => {
    const fresh = await e.fresh();
    const { db, sql } = recording(fresh.db);
    const runs = new RunsService({ db, log: quietLog });
    const N = 8;
    for (let i = 1; i <= N; i++) await runs.register(registration('many', `w${i}`, { join: true }));
    const reportReads = (): number =>
      sql.filter((s) => /SELECT \* FROM run_workers WHERE run_id = \$1 ORDER/.test(s)).length;
    for (let i = 1; i < N; i++) {
      const rec = await runs.finish('many', finish(`w${i}`, latencies(50, 300, i)));
      assert.equal(rec.status, 'running');
    }
    assert.equal(reportReads(), 0, 'no report read while a worker still runs');
    const rec = await runs.finish('many', finish(`w${N}`, latencies(50, 300, N)));
    assert.equal(rec.status, 'passed');
    assert.equal(rec.merge?.workers, N);
    assert.equal(reportReads(), 1, 'the reports read once, at the last finish');
  });
});
