/**
 * Saved root-cause answers, for a postmortem to link to: POST /api/rca/answers saves what a user is looking at (a
 * trace's root cause, a range's, or an answer given), GET /api/rca/answers/:id gives it back as it was — also after a
 * restart, when the trace itself may be gone — and the Markdown export links the saved answers of its traces.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RcaAnswer, SavedRcaAnswer, SavedRcaAnswerMeta } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, hex, otlp } from '../../support/otlp-spans';

const APP_URL = 'https://grafana.example.com';
const T0 = Date.now() - 120_000;
const SLOW = hex(21, 32);
let dir = '';
let proxy: RunningProxy;
const start = (): Promise<RunningProxy> =>
  startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 0,
    appUrl: APP_URL,
    dataDir: join(dir, 'data'),
  });
const post = (body: unknown): Promise<Response> =>
  fetch(`${proxy.url}/api/rca/answers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-rca-answers-'));
  proxy = await start();
  const spans = [];
  for (let i = 0; i < 30; i++)
    spans.push(...chainTrace(i, T0 + i * 1000, i === 20 ? 1500 : 100 + (i % 5), i === 20 ? 2 : 1));
  assert.equal(
    (
      await fetch(`${proxy.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(otlp(spans)),
      })
    ).status,
    200
  );
});
after(async () => {
  await proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a trace's root cause saved, read back as it was (also after a restart), and linked from the trace and the export", async () => {
  const live = RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${SLOW}/rca`)).json());
  const r = await post({ traceId: SLOW });
  assert.equal(r.status, 201);
  const saved = (await r.json()) as SavedRcaAnswerMeta & { links: { api: string; app: string } };
  assert.equal(SavedRcaAnswerMeta.parse(saved).traceId, SLOW);
  assert.equal(saved.links.api, `${APP_URL}/api/plugin-proxy/hopscope-rca-app/api/rca/answers/${saved.id}`);
  assert.ok(saved.links.app.startsWith(`${APP_URL}/a/hopscope-rca-app/traces/${SLOW}?from=`), saved.links.app);
  assert.ok(
    saved.fromMs !== null && saved.fromMs >= T0 + 20_000 && saved.toMs! > saved.fromMs,
    "the trace's own window"
  );
  await proxy.close();
  proxy = await start(); // the embedded trace store is gone; the saved answer is not
  const got = SavedRcaAnswer.parse(await (await fetch(`${proxy.url}/api/rca/answers/${saved.id}`)).json());
  assert.deepEqual(
    got.answer.candidates.map((c) => [c.service, c.pod, c.rank]),
    live.candidates.map((c) => [c.service, c.pod, c.rank])
  );
  assert.equal(got.answer.candidates[0].service, 'llm-vllm');
  const list = (await (await fetch(`${proxy.url}/api/rca/answers?traceId=${SLOW}`)).json()) as {
    answers: SavedRcaAnswerMeta[];
  };
  assert.deepEqual(
    list.answers.map((a) => a.id),
    [saved.id]
  );
  // The trace again (re-ingested): its root cause names the saved answer, and so does the postmortem.
  const spans = chainTrace(20, T0 + 20_000, 1500, 2);
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
  const again = (await (await fetch(`${proxy.url}/api/traces/${SLOW}/rca`)).json()) as { saved?: SavedRcaAnswerMeta[] };
  assert.deepEqual(
    again.saved?.map((s) => s.id),
    [saved.id]
  );
  const md = await (
    await fetch(`${proxy.url}/api/export/postmortem?from=${T0}&to=${T0 + 60_000}&traceId=${SLOW}`)
  ).text();
  assert.ok(
    md.includes(
      `- **Saved answer** [Trace ${SLOW}](${saved.links.api}) (saved ${new Date(saved.createdMs).toISOString()}, id \`${saved.id}\`)`
    ),
    md
  );
});

test("a range's root cause and an answer given as is can be saved too", async () => {
  const range = await post({ from: T0, to: T0 + 40_000, title: 'incident 42' });
  assert.equal(range.status, 201);
  const r = (await range.json()) as SavedRcaAnswerMeta;
  assert.equal(r.title, 'incident 42');
  assert.equal(r.fromMs, T0);
  const got = (await (await fetch(`${proxy.url}/api/rca/answers/${r.id}`)).json()) as SavedRcaAnswer & {
    answer: { sample?: { analysed: number } };
  };
  assert.ok(got.answer.sample!.analysed > 0, 'the range answer, with what it sampled');
  const given = RcaAnswer.parse(await (await fetch(`${proxy.url}/api/traces/${SLOW}/rca`)).json());
  const g = await post({ answer: given, title: 'as I saw it' });
  assert.equal(g.status, 201);
  const back = SavedRcaAnswer.parse(
    await (await fetch(`${proxy.url}/api/rca/answers/${((await g.json()) as { id: string }).id}`)).json()
  );
  assert.deepEqual(back.answer.candidates, given.candidates);
});

test('refusals: nothing named, a half range, not an answer, too big, unknown ids', async () => {
  assert.equal((await post({})).status, 400);
  assert.equal((await post({ from: T0 })).status, 400);
  assert.equal((await post({ answer: { nope: true } })).status, 400);
  assert.equal((await post({ traceId: 'Z' })).status, 400);
  const big = {
    tookMs: 1,
    criticalPath: [],
    candidates: [],
    missing: Array.from({ length: 3000 }, () => 'm'.repeat(500)),
  };
  const tooBig = await post({ answer: big });
  assert.equal(tooBig.status, 413);
  assert.equal((await post({ traceId: 'f'.repeat(32) })).status, 404, 'a trace that is not there');
  assert.equal((await fetch(`${proxy.url}/api/rca/answers/00000000-0000-0000-0000-000000000000`)).status, 404);
  assert.equal((await fetch(`${proxy.url}/api/rca/answers/not-an-id`)).status, 404);
});
