/** Named leases: one holder at a time, taken over after expiry or release, by the database's clock, on both engines. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireLease, currentLease, LeaseKeeper, releaseLease } from '../../../backend-proxy/src/db/lease';
import type { Database } from '../../../backend-proxy/src/db/database';
import { forEachEngine, quietLog } from './engines';

forEachEngine((e) => {
  /** Two "proxies": two connections to one PostgreSQL; on PGlite (one process per dir) two holders on one database. */
  async function twoProxies(): Promise<[Database, Database]> {
    const { db, where } = await e.fresh();
    return [db, e.kind === 'postgres' ? await e.open(where) : db];
  }

  test('one of two proxies holds the lease; the other takes it over only after it expires, with a new token', async () => {
    const [a, b] = await twoProxies();
    const ttl = 600;
    const first = await acquireLease(a, 'alerts-evaluator', 'proxy-a', ttl);
    assert.equal(first.held, true);
    const refused = await acquireLease(b, 'alerts-evaluator', 'proxy-b', ttl);
    assert.equal(refused.held, false);
    assert.equal(refused.lease?.holder, 'proxy-a');
    const renewed = await acquireLease(a, 'alerts-evaluator', 'proxy-a', ttl);
    assert.equal(renewed.held, true);
    assert.equal(renewed.lease?.token, first.lease?.token, 'renewing keeps the token');
    assert.ok(renewed.lease!.expiresAtMs >= first.lease!.expiresAtMs);

    await sleep(ttl + 150);
    const taken = await acquireLease(b, 'alerts-evaluator', 'proxy-b', ttl);
    assert.equal(taken.held, true);
    assert.equal(taken.lease?.token, first.lease!.token + 1);
    const lost = await acquireLease(a, 'alerts-evaluator', 'proxy-a', ttl);
    assert.equal(lost.held, false);
    assert.equal(lost.lease?.holder, 'proxy-b');
    assert.equal((await currentLease(a, 'alerts-evaluator'))?.holder, 'proxy-b');
    // Other names are independent.
    assert.equal((await acquireLease(a, 'kernel-retention', 'proxy-a', ttl)).held, true);
  });

  test('a released lease is taken at once; only its holder can release it', async () => {
    const [a, b] = await twoProxies();
    assert.equal((await acquireLease(a, 'l', 'proxy-a', 60_000)).held, true);
    assert.equal(await releaseLease(b, 'l', 'proxy-b'), false);
    assert.equal((await acquireLease(b, 'l', 'proxy-b', 60_000)).held, false);
    assert.equal(await releaseLease(a, 'l', 'proxy-a'), true);
    assert.equal(await currentLease(b, 'l'), null);
    assert.equal((await acquireLease(b, 'l', 'proxy-b', 60_000)).held, true);
  });

  test('many proxies racing for a free lease: exactly one wins', async () => {
    const { db, where } = await e.fresh();
    const conns =
      e.kind === 'postgres'
        ? await Promise.all(Array.from({ length: 6 }, () => e.open(where)))
        : Array.from({ length: 6 }, () => db);
    const results = await Promise.all(conns.map((c, i) => acquireLease(c, 'race', `proxy-${i}`, 30_000)));
    assert.equal(results.filter((r) => r.held).length, 1);
    const winner = results.find((r) => r.held)!.lease!.holder;
    assert.ok(results.every((r) => r.lease?.holder === winner));
  });

  test('LeaseKeeper: one keeper holds, the other takes over when the holder stops', async () => {
    const [a, b] = await twoProxies();
    const changes: string[] = [];
    const ka = new LeaseKeeper({
      db: a,
      name: 'alerts-evaluator',
      holder: 'proxy-a',
      ttlMs: 900,
      log: quietLog,
      onChange: (held) => changes.push(`a:${held}`),
    });
    const kb = new LeaseKeeper({
      db: b,
      name: 'alerts-evaluator',
      holder: 'proxy-b',
      ttlMs: 900,
      log: quietLog,
      onChange: (held) => changes.push(`b:${held}`),
    });
    await ka.tick();
    ka.start();
    kb.start();
    await sleep(700);
    assert.equal(ka.held(), true);
    assert.equal(kb.held(), false);
    await ka.stop();
    assert.equal(ka.held(), false);
    const t0 = Date.now();
    while (!kb.held() && Date.now() - t0 < 3000) await sleep(50);
    assert.equal(kb.held(), true, 'b took over after a released');
    assert.ok(Date.now() - t0 < 1000, 'within a renewal period (ttl/3), not a whole ttl');
    await kb.stop();
    assert.deepEqual(changes, ['a:true', 'a:false', 'b:true', 'b:false']);
  });
});
