/**
 * What a client can store as alert rules is bounded, checked before anything is saved, and accepted by the
 * evaluator first: 132,000 small rules (9.9 MiB, under the body limit) once killed the proxy in its next alert round
 * (`Math.max(...rules.map(...))`: Maximum call stack size exceeded) and, saved, at every start. Edits of one rule set
 * shared by several proxies carry the version they edited (409 on a concurrent edit).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlertRules, AlertsAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { acceptRules } from '../../../backend-proxy/src/alerts/evaluate';

let proxy: RunningProxy;
const rule = (i: number): Record<string, unknown> => ({
  id: `r${i}`,
  name: `r${i}`,
  conditions: [{ kind: 'kernel', type: 'tcp_retransmit', atLeast: 1 }],
});
const put = (body: unknown): Promise<Response> =>
  fetch(`${proxy.url}/api/alerts/rules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const rules = async (): Promise<AlertRules> =>
  AlertRules.parse(await (await fetch(`${proxy.url}/api/alerts/rules`)).json());

/** The rule bounds hold whatever the body limit (default 10 MiB): a larger one here, so the rules are what is refused. */
const BODY_LIMIT = 16 * 1024 * 1024;

before(async () => {
  proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 100,
    bodyLimitBytes: BODY_LIMIT,
  });
});
after(async () => {
  await proxy?.close();
});

test('132,000 small rules (9.9 MiB): 413 before anything is saved; the proxy stays up and keeps evaluating', async () => {
  const body = JSON.stringify({
    rules: Array.from({ length: 132_000 }, (_, i) => ({
      id: i.toString(36),
      name: 'r',
      conditions: [{ kind: 'kernel', type: 'tls_handshake' }],
    })),
  });
  assert.ok(body.length > 9.5 * 1024 * 1024 && body.length < BODY_LIMIT, `${body.length} bytes: under the body limit`);
  const before = await rules();
  const r = await put(body);
  assert.equal(r.status, 413);
  const e = (await r.json()) as { error: { code: string; message: string } };
  assert.equal(e.error.code, 'payload_too_large');
  assert.match(e.error.message, /132000 rules, at most 500; nothing was saved/);
  assert.deepEqual(await rules(), before, 'the rule set is unchanged');
  // Rounds keep running (the interval is 100 ms), and the proxy answers.
  await new Promise((res) => setTimeout(res, 400));
  assert.equal((await fetch(`${proxy.url}/api/health`)).status, 200);
  const a = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts/evaluate`, { method: 'POST' })).json());
  assert.ok(a.evaluatedAt !== null && Date.now() - a.evaluatedAt < 5000, `evaluated ${a.evaluatedAt}`);
});

test('the size bound (under the count bound), invalid rules and rules the evaluator refuses: 413/400, nothing saved', async () => {
  const before = await rules();
  const fat = Array.from({ length: 400 }, (_, i) => ({
    ...rule(i),
    name: 'x'.repeat(200),
    conditions: Array.from({ length: 10 }, () => ({ kind: 'metric', expr: 'y'.repeat(2000), op: '>', threshold: 1 })),
  }));
  const big = await put({ rules: fat });
  assert.equal(big.status, 413);
  assert.match(((await big.json()) as { error: { message: string } }).error.message, /bytes of rules, at most 1048576/);
  const invalid = await put({ rules: [{ ...rule(1), withinMs: -5 }] });
  assert.equal(invalid.status, 400);
  assert.match(((await invalid.json()) as { error: { message: string } }).error.message, /body\.rules\[0\]: withinMs/);
  const refused = await put({
    rules: [{ ...rule(1), conditions: [{ kind: 'kernel', type: 'tcp_retransmit', consecutive: 3, atLeast: 2 }] }],
  });
  assert.equal(refused.status, 400);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /not both; nothing was saved/);
  const never = await put({
    rules: [{ ...rule(1), conditions: [{ kind: 'kernel', type: 'tcp_retransmit', atLeast: 1_000_000 }] }],
  });
  assert.equal(never.status, 400);
  const dup = await put({ rules: [rule(1), rule(1)] });
  assert.equal(dup.status, 400);
  const notArray = await put({ rules: 'all of them' });
  assert.equal(notArray.status, 400);
  assert.deepEqual(await rules(), before);
});

test('expectedVersion: an edit of a version someone else replaced meanwhile is a 409 saying what to do', async () => {
  const cur = await rules();
  const v = cur.version!;
  const mine = await put({ rules: [rule(7)], expectedVersion: v });
  assert.equal(mine.status, 200);
  assert.equal(((await mine.json()) as AlertRules).version, v + 1);
  const stale = await put({ rules: [rule(8)], expectedVersion: v });
  assert.equal(stale.status, 409);
  const e = (await stale.json()) as { error: { code: string; message: string } };
  assert.equal(e.error.code, 'conflict');
  assert.match(
    e.error.message,
    new RegExp(`you edited version ${v}, the database has version ${v + 1}\\): reload them and apply your change again`)
  );
  assert.deepEqual(
    (await rules()).rules.map((r) => r.id),
    ['r7']
  );
  assert.equal((await put({ rules: [rule(9)], expectedVersion: -1 })).status, 400);
});

test('the evaluator accepts the largest allowed rule set without an unbounded spread anywhere in alerts/', async () => {
  const many = Array.from({ length: 500 }, (_, i) => ({
    ...rule(i),
    withinMs: 5000,
    lookbackMs: 60_000 + i,
    severity: 'warning' as const,
    enabled: true,
  })) as Parameters<typeof acceptRules>[0];
  assert.equal(acceptRules(many), undefined);
  assert.equal((await put({ rules: many })).status, 200);
  const a = AlertsAnswer.parse(await (await fetch(`${proxy.url}/api/alerts/evaluate`, { method: 'POST' })).json());
  assert.ok(a.evaluatedAt !== null);
  // A call never takes a spread array (Math.max(...list), push(...list)): its length is the stack's.
  const dir = join(import.meta.dirname, '../../../backend-proxy/src/alerts');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    const hits = [
      ...text.matchAll(/\b(?:Math\.(?:max|min)|\.push|\.unshift|\.splice|String\.fromCharCode|\.apply)\([^)]*\.\.\./g),
    ].map((m) => m[0]);
    assert.deepEqual(hits, [], `${f}: spread into a call`);
  }
});

test('with the loop off (HOPSCOPE_ALERT_INTERVAL_MS=0) a round still runs on demand (POST /api/alerts/evaluate)', async () => {
  const p = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    alertIntervalMs: 0,
  });
  try {
    const idle = AlertsAnswer.parse(await (await fetch(`${p.url}/api/alerts`)).json());
    assert.equal(idle.evaluatedAt, null);
    // A GET changes no state: ?evaluate=1 is refused with what to do instead, and no round ran.
    const refused = await fetch(`${p.url}/api/alerts?evaluate=1`);
    assert.equal(refused.status, 400);
    assert.match(
      ((await refused.json()) as { error: { message: string } }).error.message,
      /POST \/api\/alerts\/evaluate/
    );
    assert.equal(AlertsAnswer.parse(await (await fetch(`${p.url}/api/alerts`)).json()).evaluatedAt, null);
    const a = AlertsAnswer.parse(await (await fetch(`${p.url}/api/alerts/evaluate`, { method: 'POST' })).json());
    assert.ok(a.evaluatedAt !== null);
    assert.equal(a.evaluator?.self, true);
  } finally {
    await p.close();
  }
});
