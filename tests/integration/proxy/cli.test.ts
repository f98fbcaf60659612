/** The proxy CLI: --help, a clear error for bad configuration, graceful shutdown on SIGTERM. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '../../../backend-proxy/src/main.ts');
const run = (env: Record<string, string>, args: string[] = []) =>
  spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });

test('--help lists the environment variables', () => {
  const r = run({}, ['--help']);
  assert.equal(r.status, 0);
  for (const v of ['HOPSCOPE_PROXY_PORT', 'HOPSCOPE_PROXY_TOKEN', 'HOPSCOPE_TEMPO_URL', 'HOPSCOPE_EXPORTER_URLS'])
    assert.match(r.stdout, new RegExp(v));
});

test('bad configuration exits 2 with the variable named', () => {
  const r = run({ HOPSCOPE_PROXY_PORT: 'abc' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /HOPSCOPE_PROXY_PORT: "abc" is not a whole number/);
  const open = run({ HOPSCOPE_PROXY_HOST: '0.0.0.0', HOPSCOPE_PROXY_PORT: '0' });
  assert.equal(open.status, 2);
  assert.match(open.stderr, /without a token/);
});

test('SIGTERM stops it cleanly', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, HOPSCOPE_PROXY_PORT: '0', HOPSCOPE_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d;
      const m = /listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error('exited early')));
  });
  assert.equal((await fetch(`${url}/metrics`)).status, 200);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.kill('SIGTERM');
  });
  assert.equal(code, 0);
});
