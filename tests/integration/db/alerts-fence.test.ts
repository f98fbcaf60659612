/**
 * A stale alert evaluator cannot write a transition (issue 20, finding 12): two evaluators (two proxies, each its own
 * connection on PostgreSQL) take the `alerts-evaluator` lease in turn; the first, which lost it while it thought it
 * still held it (a pause past the ttl), is refused in the database (LeaseLostError, nothing written), the second
 * writes. On PGlite and a real PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Alert } from '../../../contract';
import { alertHistory, alertStates, recordAlert } from '../../../backend-proxy/src/db/alerts-repo';
import { acquireLease, LeaseLostError } from '../../../backend-proxy/src/db/lease';
import { EVALUATOR_LEASE } from '../../../backend-proxy/src/alerts/manager';
import { forEachEngine } from './engines';

const alert = (state: Alert['state'], at: number): Alert => ({
  ruleId: 'fenced',
  name: 'rule fenced',
  state,
  severity: 'critical',
  startsAt: at,
  ...(state === 'resolved' ? { endsAt: at + 1000 } : {}),
  pod: 'llm-0',
  summary: 'queue over 16 on llm-0',
  link: '/a/hopscope-rca-app/alerts',
});

forEachEngine((e) => {
  test('two evaluators: the one that lost the lease writes nothing; the holder with the newer token writes', async () => {
    const { db, where } = await e.fresh();
    const other = e.kind === 'postgres' ? await e.open(where) : db;
    const t = 1_750_000_000_000;
    const a = await acquireLease(db, EVALUATOR_LEASE, 'proxy-a', 60_000);
    assert.equal(a.held, true);
    // proxy-a writes under its lease.
    const fenceA = { lease: EVALUATOR_LEASE, holder: 'proxy-a', token: a.lease!.token };
    assert.equal(await recordAlert(db, alert('firing', t), t, fenceA), true);
    // proxy-a stalls past its ttl (its expiry moved to the past by the database's clock, as a pause would leave it);
    // proxy-b takes the lease over (a newer token).
    await db.query(`UPDATE leases SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE name = $1`, [
      EVALUATOR_LEASE,
    ]);
    const b = await acquireLease(other, EVALUATOR_LEASE, 'proxy-b', 60_000);
    assert.equal(b.held, true);
    assert.ok(b.lease!.token > fenceA.token, `token ${b.lease!.token} after ${fenceA.token}`);
    // proxy-a wakes up and resolves the alert it still believes it owns: refused, nothing written.
    await assert.rejects(
      recordAlert(db, alert('resolved', t + 5000), t + 5000, fenceA),
      (err: unknown) => err instanceof LeaseLostError && /no longer held by proxy-a/.test(err.message)
    );
    assert.deepEqual(
      (await alertHistory(db, { ruleId: 'fenced' })).map((h) => h.alert.state),
      ['firing']
    );
    assert.equal((await alertStates(db, { firingOnly: true })).length, 1, 'still firing');
    // The holder writes.
    const fenceB = { lease: EVALUATOR_LEASE, holder: 'proxy-b', token: b.lease!.token };
    assert.equal(await recordAlert(other, alert('resolved', t + 6000), t + 6000, fenceB), true);
    assert.deepEqual((await alertHistory(db, { ruleId: 'fenced' })).map((h) => h.alert.state).sort(), [
      'firing',
      'resolved',
    ]);
    // A wrong token of the right holder is refused too (an old round of proxy-b's earlier tenure).
    await assert.rejects(
      recordAlert(other, alert('firing', t + 9000), t + 9000, { ...fenceB, token: fenceB.token - 1 }),
      LeaseLostError
    );
  });
});
