import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlertRules } from '../../../contract';
import { ConfigError, configFromEnv } from '../../../backend-proxy/src/config';
import { startProxy } from '../../../backend-proxy/src/server';

const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined, alertIntervalMs: 0 };
const rule = {
  id: 'slow-handshakes', name: 'Slow TLS handshakes', withinMs: 5000, lookbackMs: 60_000, severity: 'warning', enabled: true,
  conditions: [{ kind: 'kernel', type: 'tls_handshake', minDurationMs: 300, consecutive: 2 }],
};
const put = (url: string, rules: unknown[]): Promise<Response> =>
  fetch(`${url}/api/alerts/rules`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });

test('with a rules file, rules saved by PUT come back after a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-rules-'));
  const file = join(dir, 'rules.json');
  try {
    let proxy = await startProxy({ port: 0, ...none, alertRulesFile: file });
    const before = (await (await fetch(`${proxy.url}/api/alerts/rules`)).json()) as { rules: Array<{ id: string }> };
    assert.deepEqual(before.rules.map((r) => r.id), ['tls-slow-and-gpu-oom'], 'no file yet: the default rule');
    assert.equal((await put(proxy.url, [rule])).status, 200);
    assert.deepEqual(AlertRules.parse(JSON.parse(readFileSync(file, 'utf8'))).rules.map((r) => r.id), ['slow-handshakes']);
    await proxy.close();
    proxy = await startProxy({ port: 0, ...none, alertRulesFile: file });
    const after = (await (await fetch(`${proxy.url}/api/alerts/rules`)).json()) as { rules: Array<{ id: string }> };
    assert.deepEqual(after.rules.map((r) => r.id), ['slow-handshakes']);
    await proxy.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a rules file that cannot be saved: 500 naming why, and the previous rules stay in effect', async () => {
  const proxy = await startProxy({ port: 0, ...none, alertRulesFile: '/nonexistent-hopscope-dir/rules.json' });
  try {
    const r = await put(proxy.url, [rule]);
    assert.equal(r.status, 500);
    const b = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(b.error.code, 'not_saved');
    assert.match(b.error.message, /previous rules stay in effect/);
    const now = (await (await fetch(`${proxy.url}/api/alerts/rules`)).json()) as { rules: Array<{ id: string }> };
    assert.deepEqual(now.rules.map((x) => x.id), ['tls-slow-and-gpu-oom']);
  } finally {
    await proxy.close();
  }
});

test('a broken rules file stops the start with a configuration error naming the file and the problem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-rules-'));
  const file = join(dir, 'rules.json');
  try {
    writeFileSync(file, '{"rules": [');
    await assert.rejects(startProxy({ port: 0, ...none, alertRulesFile: file }), (e: Error) => e instanceof ConfigError && e.message.includes(file) && /not JSON/.test(e.message));
    writeFileSync(file, JSON.stringify({ rules: [{ ...rule, withinMs: -1 }] }));
    await assert.rejects(startProxy({ port: 0, ...none, alertRulesFile: file }), (e: Error) => e instanceof ConfigError && /withinMs/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => configFromEnv({ HOPSCOPE_ALERT_RULES_FILE: 'rules.json' }), /absolute path/);
  assert.equal(configFromEnv({ HOPSCOPE_ALERT_RULES_FILE: '/etc/hopscope/rules.json' }).alertRulesFile, '/etc/hopscope/rules.json');
});
