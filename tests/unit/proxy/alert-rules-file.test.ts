/**
 * HOPSCOPE_ALERT_RULES_FILE is an import/export format around the database, not the store: imported at start only
 * when the database holds no rules (validated and bounded first), never written; a file that cannot be imported is
 * refused with a message naming it and the proxy starts anyway; GET …/export and POST …/import carry the same format.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlertRules, AlertRulesExport } from '../../../contract';
import { configFromEnv } from '../../../backend-proxy/src/config';
import { startProxy } from '../../../backend-proxy/src/server';

const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined, alertIntervalMs: 0 };
const rule = {
  id: 'slow-handshakes',
  name: 'Slow TLS handshakes',
  withinMs: 5000,
  lookbackMs: 60_000,
  severity: 'warning',
  enabled: true,
  conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 300, consecutive: 2 }],
};
const put = (url: string, body: unknown): Promise<Response> =>
  fetch(`${url}/api/alerts/rules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const getRules = async (url: string): Promise<AlertRules & { notice?: string }> =>
  (await (await fetch(`${url}/api/alerts/rules`)).json()) as AlertRules & { notice?: string };

function tempDir(): { dir: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-rules-'));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the file is imported once into an empty database; PUT saves to the database and leaves the file alone; a restart keeps the saved rules', async () => {
  const t = tempDir();
  const file = join(t.dir, 'rules.json');
  const dataDir = join(t.dir, 'data');
  try {
    writeFileSync(file, JSON.stringify({ rules: [rule] }));
    const written = statSync(file).mtimeMs;
    let proxy = await startProxy({ port: 0, ...none, alertRulesFile: file, dataDir });
    const first = await getRules(proxy.url);
    assert.deepEqual(
      first.rules.map((r) => r.id),
      ['slow-handshakes'],
      'imported from the file'
    );
    assert.equal(first.version, 1);
    assert.match(first.updatedBy ?? '', /^import /);
    const edited = { ...rule, id: 'edited', name: 'Edited' };
    const r = await put(proxy.url, { rules: [edited], expectedVersion: 1 });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as AlertRules).version, 2);
    assert.equal(statSync(file).mtimeMs, written, 'the file is not the store: never written');
    assert.deepEqual(
      AlertRules.parse(JSON.parse(readFileSync(file, 'utf8'))).rules.map((x) => x.id),
      ['slow-handshakes']
    );
    await proxy.close();
    // The database holds rules now: the file is not imported again.
    proxy = await startProxy({ port: 0, ...none, alertRulesFile: file, dataDir });
    const again = await getRules(proxy.url);
    assert.deepEqual(
      again.rules.map((x) => x.id),
      ['edited']
    );
    assert.equal(again.version, 2);
    await proxy.close();
  } finally {
    t.done();
  }
});

test('a file that cannot be imported is refused with a message naming it and why; the proxy starts, nothing is stored', async () => {
  const t = tempDir();
  const cases: Array<[string, string, RegExp]> = [
    ['broken.json', '{"rules": [', /not JSON/],
    ['invalid.json', JSON.stringify({ rules: [{ ...rule, withinMs: -1 }] }), /withinMs/],
    [
      'many.json',
      JSON.stringify({ rules: Array.from({ length: 600 }, (_, i) => ({ ...rule, id: `r${i}` })) }),
      /600 rules, at most 500/,
    ],
    [
      'both.json',
      JSON.stringify({
        rules: [{ ...rule, conditions: [{ kind: 'kernel', type: 'tls_handshake', consecutive: 2, atLeast: 3 }] }],
      }),
      /consecutive or atLeast, not both/,
    ],
  ];
  try {
    for (const [name, text, why] of cases) {
      const file = join(t.dir, name);
      writeFileSync(file, text);
      const proxy = await startProxy({ port: 0, ...none, alertRulesFile: file });
      try {
        const got = await getRules(proxy.url);
        assert.deepEqual(got.rules, [], `${name}: no rules stored`);
        assert.equal(got.version, 0, `${name}: nothing saved`);
        assert.ok(got.notice?.includes(file), `${name}: ${got.notice}`);
        assert.match(got.notice!, why);
        const health = (await (await fetch(`${proxy.url}/api/health`)).json()) as {
          state: { alerts: { importProblem?: string } };
        };
        assert.match(health.state.alerts.importProblem ?? '', why);
        // Rules can still be PUT (the first version).
        assert.equal((await put(proxy.url, { rules: [rule], expectedVersion: 0 })).status, 200);
      } finally {
        await proxy.close();
      }
    }
  } finally {
    t.done();
  }
});

test('export and import carry the rule set between proxies (the format the file takes)', async () => {
  const a = await startProxy({ port: 0, ...none });
  const b = await startProxy({ port: 0, ...none });
  try {
    assert.equal((await put(a.url, { rules: [rule, { ...rule, id: 'second' }] })).status, 200);
    const res = await fetch(`${a.url}/api/alerts/rules/export`);
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="hopscope-alert-rules-v2\.json"/);
    const x = AlertRulesExport.parse(await res.json());
    assert.deepEqual(
      x.rules.map((r) => r.id),
      ['slow-handshakes', 'second']
    );
    const imported = await fetch(`${b.url}/api/alerts/rules/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(x),
    });
    assert.equal(imported.status, 200);
    assert.deepEqual((await getRules(b.url)).rules, x.rules);
    const bad = await fetch(`${b.url}/api/alerts/rules/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ format: 'x' }),
    });
    assert.equal(bad.status, 400);
  } finally {
    await a.close();
    await b.close();
  }
});

test('HOPSCOPE_ALERT_RULES_FILE must be an absolute path', () => {
  assert.throws(() => configFromEnv({ HOPSCOPE_ALERT_RULES_FILE: 'rules.json' }), /absolute path/);
  assert.equal(
    configFromEnv({ HOPSCOPE_ALERT_RULES_FILE: '/etc/hopscope/rules.json' }).alertRulesFile,
    '/etc/hopscope/rules.json'
  );
});
