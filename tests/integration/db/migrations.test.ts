/** Versioned migrations on both engines: applied once, atomically, safely by concurrent openers; refused when unsafe. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIGRATIONS, migrate } from '../../../backend-proxy/src/db/migrations';
import { DatabaseLockedError, DatabaseSchemaError } from '../../../backend-proxy/src/db/errors';
import { openDatabase } from '../../../backend-proxy/src/db/database';
import { getRcaAnswer, saveRcaAnswer } from '../../../backend-proxy/src/db/rca-answers-repo';
import { forEachEngine, quietLog } from './engines';

const TABLES = [
  'alert_evaluations',
  'alert_history',
  'alert_rules',
  'alert_state',
  'kernel_events',
  'kernel_evidence_gaps',
  'kernel_evidence_meta',
  'kernel_stream_positions',
  'leases',
  'rca_answers',
  'run_workers',
  'runs',
  'schema_migrations',
];
const answer = { tookMs: 1.5, criticalPath: [], candidates: [], missing: ['kernel events'] };

forEachEngine((e) => {
  test('a fresh database has every table and each migration recorded once; reopening applies nothing and keeps data', async () => {
    const { db, where } = await e.fresh();
    const tables = (
      await db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
      )
    ).rows.map((r) => r.table_name);
    assert.deepEqual(tables, TABLES);
    const before = (
      await db.query<{ version: number; applied_at: Date }>(
        'SELECT version, applied_at FROM schema_migrations ORDER BY version'
      )
    ).rows;
    assert.deepEqual(
      before.map((r) => r.version),
      MIGRATIONS.map((m) => m.version)
    );
    assert.equal(db.schemaVersion, MIGRATIONS.length);
    const saved = await saveRcaAnswer(db, { answer });
    await db.close();

    const again = await e.open(where);
    const after = (
      await again.query<{ version: number; applied_at: Date }>(
        'SELECT version, applied_at FROM schema_migrations ORDER BY version'
      )
    ).rows;
    assert.deepEqual(after, before);
    assert.deepEqual((await getRcaAnswer(again, saved.id))?.answer, answer);
    // migrate() itself is idempotent too.
    assert.equal(await migrate(again.tx.bind(again), quietLog), MIGRATIONS.length);
    assert.equal(
      (await again.query<{ n: number }>('SELECT count(*) AS n FROM schema_migrations')).rows[0].n,
      MIGRATIONS.length
    );
  });

  test('pending migrations apply in one transaction: a failing one leaves nothing of itself behind', async () => {
    const { db } = await e.fresh();
    const broken = [
      ...MIGRATIONS,
      {
        version: MIGRATIONS.length + 1,
        name: 'broken',
        sql: 'CREATE TABLE half_done (x int); SELECT no_such_column FROM half_done;',
      },
    ];
    await assert.rejects(migrate(db.tx.bind(db), quietLog, broken), /no_such_column/);
    const t = (await db.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`)).rowCount;
    assert.equal(t, 0);
    assert.equal(
      (await db.query<{ n: number }>('SELECT max(version) AS n FROM schema_migrations')).rows[0].n,
      MIGRATIONS.length
    );
  });

  test('a schema newer than this proxy, or an applied migration that changed, is refused with a clear message', async () => {
    const newer = await e.fresh();
    await newer.db.query(`INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'from the future', 'x')`);
    await newer.db.close();
    await assert.rejects(
      e.open(newer.where),
      (err: Error) =>
        err instanceof DatabaseSchemaError && /schema is at version 99, newer than this proxy knows/.test(err.message)
    );

    const changed = await e.fresh();
    await changed.db.query(`UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`);
    await changed.db.close();
    await assert.rejects(
      e.open(changed.where),
      (err: Error) =>
        err instanceof DatabaseSchemaError && /migration 1 .* differs from the one applied/.test(err.message)
    );
  });

  if (e.kind === 'postgres') {
    test('several proxies starting at once against one PostgreSQL all open, and each migration is applied once', async () => {
      const url = await e.server!.createDatabase('concurrent');
      const dbs = await Promise.all(Array.from({ length: 4 }, () => e.open({ databaseUrl: url })));
      assert.ok(dbs.every((d) => d.schemaVersion === MIGRATIONS.length));
      const rows = (await dbs[0].query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'))
        .rows;
      assert.deepEqual(
        rows.map((r) => r.version),
        MIGRATIONS.map((m) => m.version)
      );
    });

    test('an unreachable PostgreSQL at start: a clear error naming it, without the password', async () => {
      const t0 = Date.now();
      await assert.rejects(
        openDatabase({ databaseUrl: 'postgres://hop:secret@127.0.0.1:1/x', log: quietLog, connectTimeoutMs: 500 }),
        (err: Error) =>
          /PostgreSQL at postgres:\/\/hop:\*\*\*@127\.0\.0\.1:1\/x could not be reached at start/.test(err.message) &&
          !err.message.includes('secret')
      );
      assert.ok(Date.now() - t0 < 10_000);
    });
  } else {
    test('in-memory databases (no data dir): each one migrated, empty and independent of the others', async () => {
      const a = await openDatabase({ log: quietLog });
      const b = await openDatabase({ log: quietLog });
      try {
        assert.equal(a.where, 'memory');
        assert.equal(b.schemaVersion, MIGRATIONS.length);
        await saveRcaAnswer(a, { answer });
        assert.equal((await b.query<{ n: number }>('SELECT count(*) AS n FROM rca_answers')).rows[0].n, 0);
        assert.equal((await a.query<{ n: number }>('SELECT count(*) AS n FROM rca_answers')).rows[0].n, 1);
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('a second proxy on the same data dir is refused, naming the first; after close the dir opens again', async () => {
      const { db, where } = await e.fresh();
      await assert.rejects(
        e.open(where),
        (err: Error) =>
          err instanceof DatabaseLockedError &&
          new RegExp(`in use by another proxy \\(pid ${process.pid} `).test(err.message) &&
          /HOPSCOPE_DATABASE_URL/.test(err.message)
      );
      await db.close();
      const again = await e.open(where);
      assert.equal(again.schemaVersion, MIGRATIONS.length);
    });
  }
});
