/** Kept kernel evidence on both engines: dedupe, queries, retention with its cut, and the keeper's back-pressure. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KernelEvent } from '../../../contract';
import {
  insertKernelEvents,
  keptCoverage,
  pruneKernelEvidence,
  queryKernelEvidence,
} from '../../../backend-proxy/src/db/kernel-evidence-repo';
import { KernelEvidenceKeeper } from '../../../backend-proxy/src/evidence/keeper';
import { isNotableKernelEvent } from '../../../backend-proxy/src/evidence/notable';
import { forEachEngine, quietLog } from './engines';

const T = 1_750_000_000_000;
const trace = 'ab'.repeat(16);

function ev(i: number, o: Partial<KernelEvent> = {}): KernelEvent {
  return {
    ts: T + i * 10 + 0.25,
    type: 'tcp_retransmit',
    pid: 1000 + (i % 3),
    comm: 'python',
    pod: i % 2 ? 'rag-0' : 'llm-0',
    namespace: 'chain',
    node: 'node-a',
    detail: { seq: i },
    mode: 'live',
    ...o,
  };
}

test('notable events: failed or slow connects and handshakes, retransmits, GPU allocation failures', () => {
  assert.equal(isNotableKernelEvent(ev(0)), true);
  assert.equal(isNotableKernelEvent(ev(0, { type: 'gpu_alloc_fail' })), true);
  assert.equal(isNotableKernelEvent(ev(0, { type: 'tcp_connect_fail' })), true);
  assert.equal(
    isNotableKernelEvent(ev(0, { type: 'tcp_connect', durationMs: 2, detail: { synRetransmits: 0 } })),
    false
  );
  assert.equal(isNotableKernelEvent(ev(0, { type: 'tcp_connect', durationMs: 150, detail: {} })), true);
  assert.equal(
    isNotableKernelEvent(ev(0, { type: 'tcp_connect', durationMs: 2, detail: { synRetransmits: 1 } })),
    true
  );
  assert.equal(isNotableKernelEvent(ev(0, { type: 'tls_handshake', durationMs: 20, detail: { result: 'ok' } })), false);
  assert.equal(isNotableKernelEvent(ev(0, { type: 'tls_handshake', durationMs: 600, detail: { result: 'ok' } })), true);
  assert.equal(
    isNotableKernelEvent(ev(0, { type: 'tls_handshake', durationMs: 20, detail: { result: 'aborted' } })),
    true
  );
  assert.equal(isNotableKernelEvent(ev(0, { type: 'http_traceparent' })), false);
});

forEachEngine((e) => {
  test('events are kept once however often a stream is re-read; bad ones are rejected with a reason', async () => {
    const { db } = await e.fresh();
    const batch = Array.from({ length: 50 }, (_, i) => ev(i));
    assert.deepEqual(await insertKernelEvents(db, batch), { inserted: 50, duplicates: 0, rejected: 0 });
    const again = await insertKernelEvents(db, [...batch.slice(40), ev(50), ev(50)]);
    assert.equal(again.inserted, 1);
    assert.equal(again.duplicates, 11);
    const bad = await insertKernelEvents(db, [
      { ...ev(60), type: 'nope' },
      { ...ev(61), detail: { big: 'x'.repeat(5000) } },
    ]);
    assert.equal(bad.rejected, 2);
    assert.match(bad.firstRejection!, /type/);
    assert.equal((await db.query<{ n: number }>('SELECT count(*) AS n FROM kernel_events')).rows[0].n, 51);
    await assert.rejects(
      insertKernelEvents(
        db,
        Array.from({ length: 1001 }, (_, i) => ev(i))
      ),
      /at most 1000/
    );
  });

  test('queries by pod and window, trace id, pid and type; oldest first; truncated past the limit', async () => {
    const { db } = await e.fresh();
    await insertKernelEvents(db, [
      ...Array.from({ length: 40 }, (_, i) => ev(i)),
      ev(100, { type: 'tls_handshake', durationMs: 700, traceId: trace, detail: { result: 'ok' }, pod: 'rag-0' }),
    ]);
    const rag = await queryKernelEvidence(db, { pod: 'rag-0', from: T, to: T + 200 });
    assert.equal(rag.events.length, 10);
    assert.ok(rag.events.every((x) => x.pod === 'rag-0' && x.ts >= T && x.ts <= T + 200));
    assert.ok(rag.events.every((x, i) => i === 0 || rag.events[i - 1].ts <= x.ts));
    assert.deepEqual(rag.events[0], ev(1), 'an event reads back exactly as it was given');
    const byTrace = await queryKernelEvidence(db, { traceId: trace, from: T, to: T + 10_000 });
    assert.equal(byTrace.events.length, 1);
    assert.equal(byTrace.events[0].durationMs, 700);
    assert.equal(
      (await queryKernelEvidence(db, { pid: 1000, node: 'node-a', from: T, to: T + 10_000 })).events.length,
      14
    );
    assert.equal(
      (await queryKernelEvidence(db, { types: ['tls_handshake'], from: T, to: T + 10_000 })).events.length,
      1
    );
    const limited = await queryKernelEvidence(db, { from: T, to: T + 10_000, limit: 5 });
    assert.equal(limited.events.length, 5);
    assert.equal(limited.truncated, true);
    assert.equal(limited.earliestKeptMs, T + 0.25);
    assert.equal(limited.retainedFromMs, null);
  });

  test('retention deletes by time in batches and says from when evidence is kept', async () => {
    const { db } = await e.fresh();
    await insertKernelEvents(
      db,
      Array.from({ length: 100 }, (_, i) => ev(i))
    );
    const cut = T + 500;
    const first = await pruneKernelEvidence(db, cut, 20);
    assert.deepEqual(first, { deleted: 20, more: true });
    assert.equal((await keptCoverage(db)).retainedFromMs, null, 'the cut is recorded only once all before it is gone');
    let more = true;
    while (more) more = (await pruneKernelEvidence(db, cut, 20)).more;
    const cover = await keptCoverage(db);
    assert.equal(cover.retainedFromMs, cut);
    assert.equal(cover.earliestKeptMs, T + 500.25);
    const old = await queryKernelEvidence(db, { pod: 'llm-0', from: T, to: T + 1000 });
    assert.equal(old.windowPrunedByRetention, true);
    assert.ok(old.events.every((x) => x.ts >= cut));
    assert.equal((await queryKernelEvidence(db, { from: cut + 1, to: T + 2000 })).windowPrunedByRetention, false);
    assert.equal((await db.query<{ n: number }>('SELECT count(*) AS n FROM kernel_events')).rows[0].n, 50);
  });

  test('the keeper: only notable events, back-pressure over the high-water mark, retention by its setting', async () => {
    const { db } = await e.fresh();
    let now = T + 10 * 86_400_000;
    const keeper = new KernelEvidenceKeeper({
      db,
      log: quietLog,
      retentionMs: 7 * 86_400_000,
      highWater: 20,
      batch: 10,
      now: () => now,
    });
    const routine = ev(0, { type: 'tcp_connect', durationMs: 1, detail: {} });
    assert.equal(keeper.offer([routine, ...Array.from({ length: 15 }, (_, i) => ev(i, { ts: now - 1000 + i }))]), true);
    assert.equal(
      keeper.offer(Array.from({ length: 10 }, (_, i) => ev(i + 15, { ts: now - 1000 + i + 15 }))),
      false,
      'over the high-water mark: stop reading'
    );
    let drained = false;
    const wait = keeper.drained().then(() => {
      drained = true;
    });
    await keeper.flush();
    await wait;
    assert.equal(drained, true);
    const st = keeper.stats();
    assert.equal(st.written, 25);
    assert.equal(st.notOffered, 1);
    assert.equal(st.queued, 0);
    // Past twice the high-water mark what does not fit is dropped, and counted.
    keeper.offer(Array.from({ length: 50 }, (_, i) => ev(i + 100, { ts: now - 500 + i })));
    assert.equal(keeper.stats().dropped, 10);
    await keeper.flush();
    // Old evidence goes by the retention setting.
    await insertKernelEvents(db, [ev(1, { ts: now - 8 * 86_400_000 })]);
    now += 1;
    assert.equal(await keeper.prune(), 1);
    assert.equal((await keptCoverage(db)).retainedFromMs, now - 7 * 86_400_000);
    await keeper.stop();
  });

  if (e.kind === 'postgres') {
    test('the keeper holds its queue while PostgreSQL is down and writes it when it is back', async () => {
      const { db } = await e.fresh();
      const keeper = new KernelEvidenceKeeper({
        db,
        log: quietLog,
        retentionMs: 86_400_000,
        highWater: 100,
        batch: 10,
      });
      await e.server!.stop();
      try {
        keeper.offer(Array.from({ length: 30 }, (_, i) => ev(i)));
        await keeper.flush();
        assert.equal(keeper.stats().queued, 30);
        assert.ok(keeper.stats().failedWrites >= 1);
      } finally {
        await e.server!.start();
      }
      await keeper.stop(); // one more attempt, now that it is up
      assert.equal(keeper.stats().queued, 0);
      assert.equal(keeper.stats().written, 30);
    });
  }
});
