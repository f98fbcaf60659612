/**
 * The crash loop of a rules file: 132,000 small rules (9.9 MiB) in HOPSCOPE_ALERT_RULES_FILE once killed the proxy
 * at every start (`Maximum call stack size exceeded` in the first alert round). Now the proxy CLI refuses the file
 * with a clear log line naming it and the bound, stores nothing, starts, keeps evaluating, and starts again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlertRules, AlertsAnswer } from '../../../contract';
import { startProxyProcess, type ProxyProcess } from '../reliability/support/proxy-process';

let dir = '';
const procs: ProxyProcess[] = [];
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'proxy-alert-limits-'));
});
after(async () => {
  for (const p of procs) await p.kill9();
  rmSync(dir, { recursive: true, force: true });
});

test('a 132,000-rule file is refused at start with a clear log; the proxy is up, evaluating, and restarts fine', async () => {
  const file = join(dir, 'rules.json');
  writeFileSync(
    file,
    JSON.stringify({
      rules: Array.from({ length: 132_000 }, (_, i) => ({
        id: i.toString(36),
        name: 'r',
        conditions: [{ kind: 'kernel', type: 'tls_handshake' }],
      })),
    })
  );
  assert.ok(statSync(file).size > 9.5 * 1024 * 1024);
  const env = {
    HOPSCOPE_ALERT_RULES_FILE: file,
    HOPSCOPE_DATA_DIR: join(dir, 'data'),
    HOPSCOPE_EXPORTER_URLS: 'none',
    HOPSCOPE_PROMETHEUS_URL: 'none',
    HOPSCOPE_ALERT_INTERVAL_MS: '100',
    HOPSCOPE_LOG_LEVEL: 'info',
  };
  for (let start = 0; start < 2; start++) {
    const p = await startProxyProcess(env);
    procs.push(p);
    assert.equal((await fetch(`${p.url}/api/health`)).status, 200);
    // The rules are loaded in the background from the start (the proxy listens meanwhile); reading them waits for
    // that load, which logs the refusal before it answers.
    const rules = AlertRules.parse(await (await fetch(`${p.url}/api/alerts/rules`)).json());
    assert.deepEqual(rules.rules, []);
    assert.equal(rules.version, 0, 'nothing stored');
    assert.match(rules.notice ?? '', /not imported/);
    // The log line comes through its own pipe, which may be read a moment after the answer's socket.
    const refused = (): string | undefined =>
      p
        .output()
        .split('\n')
        .find((l) => l.includes('HOPSCOPE_ALERT_RULES_FILE refused'));
    for (const t0 = Date.now(); !refused() && Date.now() - t0 < 2000;) await new Promise((r) => setTimeout(r, 20));
    const line = refused();
    assert.ok(line, `a log line says the file was refused:\n${p.output().slice(-3000)}`);
    const logged = JSON.parse(line) as { level: number; file: string; problem: string };
    assert.equal(logged.level, 50, 'logged as an error');
    assert.equal(logged.file, file);
    assert.match(logged.problem, /bytes, over the \d+-byte limit of a rules file|132000 rules, at most 500/);
    // Rounds run (every 100 ms) and the proxy stays up.
    await new Promise((r) => setTimeout(r, 500));
    const a = AlertsAnswer.parse(await (await fetch(`${p.url}/api/alerts/evaluate`, { method: 'POST' })).json());
    assert.ok(a.evaluatedAt !== null);
    assert.equal(p.exited(), undefined, 'still running');
    await p.stop();
    assert.deepEqual(p.exited(), { code: 0, signal: null }, 'a clean stop, not a crash');
  }
});
