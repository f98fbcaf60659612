/** Saved root-cause answers (what a postmortem links to), on both engines. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  deleteRcaAnswer,
  getRcaAnswer,
  listRcaAnswers,
  RcaAnswerInputError,
  saveRcaAnswer,
} from '../../../backend-proxy/src/db/rca-answers-repo';
import { forEachEngine } from './engines';

const trace = '0af7651916cd43dd8448eb211c80319c';
const answer = {
  traceId: trace,
  tookMs: 3.2,
  criticalPath: [],
  candidates: [
    {
      rank: 1,
      service: 'rag',
      pod: 'rag-0',
      score: 0.91,
      evidence: [{ kind: 'self_time', summary: 'rag took 412 ms, baseline 38 ms', selfMs: 412 }],
    },
  ],
  missing: [],
};

forEachEngine((e) => {
  test('an answer saved with its trace id and window reads back whole, extra fields included; listed newest first', async () => {
    const { db } = await e.fresh();
    const a = await saveRcaAnswer(
      db,
      { answer, fromMs: 1000, toMs: 2000, title: 'RAG slow at 14:02' },
      1_750_000_000_000
    );
    assert.equal(a.traceId, trace, 'the trace id comes from the answer when not given');
    const withExtra = { ...answer, traceId: undefined, hops: [{ service: 'rag', deltaP50Ms: 300 }] };
    const b = await saveRcaAnswer(db, { answer: withExtra }, 1_750_000_001_000);
    assert.deepEqual((await getRcaAnswer(db, a.id))?.answer, answer);
    const gotB = await getRcaAnswer(db, b.id);
    assert.deepEqual(gotB?.answer.hops, withExtra.hops);
    assert.equal(gotB?.traceId, null);
    assert.deepEqual(
      (await listRcaAnswers(db)).map((x) => x.id),
      [b.id, a.id]
    );
    assert.deepEqual(
      (await listRcaAnswers(db, { traceId: trace })).map((x) => [x.id, x.title, x.fromMs, x.toMs]),
      [[a.id, 'RAG slow at 14:02', 1000, 2000]]
    );
    assert.equal(await getRcaAnswer(db, '00000000-0000-0000-0000-000000000000'), null);
    assert.equal(await getRcaAnswer(db, "'; DROP TABLE rca_answers; --"), null);
    assert.equal(await deleteRcaAnswer(db, a.id), true);
    assert.equal(await getRcaAnswer(db, a.id), null);
  });

  test('what is not an answer, or too big, is refused with the reason', async () => {
    const { db } = await e.fresh();
    await assert.rejects(
      saveRcaAnswer(db, { answer: { tookMs: 'fast' } }),
      (err: Error) => err instanceof RcaAnswerInputError && /not a root-cause answer: tookMs/.test(err.message)
    );
    await assert.rejects(
      saveRcaAnswer(db, { answer: { ...answer, missing: ['x'.repeat(1024 * 1024)] } }),
      /over the 1048576-byte limit/
    );
    await assert.rejects(saveRcaAnswer(db, { answer, traceId: 'XYZ' }), /not 32 lowercase hex digits/);
    await assert.rejects(saveRcaAnswer(db, { answer, fromMs: 5, toMs: 1 }), /fromMs \(5\) is after toMs \(1\)/);
    assert.equal((await listRcaAnswers(db)).length, 0);
  });
});
