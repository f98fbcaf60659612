/** Alert rules (one versioned set), state per (rule, pod) and the history of transitions, on both engines. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Alert, AlertRule } from '../../../contract';
import {
  AlertInputError,
  AlertRulesConflictError,
  alertHistory,
  alertStates,
  forgetRules,
  getRules,
  pruneAlertHistory,
  putRules,
  recordAlert,
  seedRules,
} from '../../../backend-proxy/src/db/alerts-repo';
import { forEachEngine } from './engines';

const rule = (id: string, over: Partial<AlertRule> = {}): AlertRule => ({
  id,
  name: `rule ${id}`,
  conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 }],
  withinMs: 5000,
  lookbackMs: 60_000,
  severity: 'critical',
  enabled: true,
  ...over,
});
const alert = (ruleId: string, state: Alert['state'], at: number, pod?: string): Alert => ({
  ruleId,
  name: `rule ${ruleId}`,
  state,
  severity: 'critical',
  startsAt: at,
  ...(state === 'resolved' ? { endsAt: at + 1000 } : {}),
  ...(pod ? { pod } : {}),
  summary: `3 slow handshakes on ${pod ?? 'a pod'}`,
  link: '/a/hopscope-rca-app/alerts',
});

forEachEngine((e) => {
  test('rules: seeded once, versioned on every save, a stale save is refused, and another proxy reads the same set', async () => {
    const { db, where } = await e.fresh();
    assert.equal(await getRules(db), null);
    const seeded = await seedRules(db, [rule('a')]);
    assert.equal(seeded.version, 1);
    assert.equal((await seedRules(db, [rule('other')])).rules[0].id, 'a', 'seeding again changes nothing');

    const v2 = await putRules(db, [rule('a'), rule('b')], { expectedVersion: 1, by: 'alice' });
    assert.equal(v2.version, 2);
    assert.equal(v2.updatedBy, 'alice');
    await assert.rejects(
      putRules(db, [rule('c')], { expectedVersion: 1 }),
      (err: Error) =>
        err instanceof AlertRulesConflictError && /you edited version 1, the database has version 2/.test(err.message)
    );
    assert.equal((await putRules(db, [rule('c')])).version, 3, 'without a version: last writer wins');

    const other = e.kind === 'postgres' ? await e.open(where) : db;
    const seen = await getRules(other);
    assert.equal(seen?.version, 3);
    assert.deepEqual(
      seen?.rules.map((r) => r.id),
      ['c']
    );

    await assert.rejects(
      putRules(db, [rule('d'), rule('d')]),
      (err: Error) => err instanceof AlertInputError && /"d" appears twice/.test(err.message)
    );
    await assert.rejects(
      putRules(db, [{ ...rule('e'), conditions: [] }]),
      (err: Error) => err instanceof AlertInputError && /rule #0: conditions/.test(err.message)
    );
    assert.equal((await getRules(db))?.version, 3, 'a refused save changes nothing');
  });

  test('state and history: each firing/resolved transition once, per pod; repeating the current state adds nothing', async () => {
    const { db } = await e.fresh();
    const t = 1_750_000_000_000;
    assert.equal(await recordAlert(db, alert('r1', 'firing', t, 'rag-0')), true);
    assert.equal(await recordAlert(db, alert('r1', 'firing', t, 'rag-0')), false, 're-sent firing alert');
    assert.equal(await recordAlert(db, alert('r1', 'firing', t + 10, 'rag-1')), true, 'another pod is another alert');
    assert.equal(await recordAlert(db, alert('r1', 'resolved', t, 'rag-0')), true);
    assert.equal(
      await recordAlert(db, alert('r2', 'resolved', t)),
      false,
      'a never-fired alert resolving is no transition'
    );

    const firing = await alertStates(db, { firingOnly: true });
    assert.deepEqual(
      firing.map((s) => [s.ruleId, s.pod]),
      [['r1', 'rag-1']]
    );
    const all = await alertStates(db);
    assert.equal(all.length, 3);
    const hist = await alertHistory(db);
    assert.deepEqual(
      hist.map((h) => [h.alert.state, h.alert.pod, h.atMs]),
      [
        ['resolved', 'rag-0', t + 1000],
        ['firing', 'rag-1', t + 10],
        ['firing', 'rag-0', t],
      ]
    );
    assert.equal((await alertHistory(db, { ruleId: 'r2' })).length, 0);
    assert.equal((await alertHistory(db, { from: t + 5, to: t + 20 })).length, 1);

    assert.equal(await forgetRules(db, ['r1']), 1, 'r2 (resolved, rule gone) is forgotten');
    assert.equal(await pruneAlertHistory(db, t + 500), 2);
    assert.equal((await alertHistory(db)).length, 1);
    await assert.rejects(recordAlert(db, { ...alert('r3', 'firing', t), link: 42 } as never), AlertInputError);
  });

  if (e.kind === 'postgres') {
    test('two proxies recording the same new alert at once: one transition in the history', async () => {
      const { db, where } = await e.fresh();
      const others = await Promise.all([e.open(where), e.open(where), e.open(where)]);
      const a = alert('race', 'firing', 1_750_000_000_000, 'llm-0');
      const results = await Promise.all([db, ...others].map((d) => recordAlert(d, a)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await alertHistory(db, { ruleId: 'race' })).length, 1);
    });
  }
});
