/** The host's CLI: --help, a clear error for a bad value, and a clean stop on SIGTERM. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { ensurePluginBuilt, ROOT } from '../../support/host';

const main = join(ROOT, 'tests/host/main.ts');
const node = (args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', main, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, HOPSCOPE_HOST_PORT: '' },
  });

describe('host CLI', () => {
  it('--help prints the options and exits 0', () => {
    const res = node(['--help']);
    assert.equal(res.status, 0);
    for (const flag of ['--port', '--proxy-url', '--dist', '--proxy-token']) {
      assert.ok(res.stdout.includes(flag), flag);
    }
  });

  it('a bad value exits 2 with a message naming it', () => {
    const res = node(['--port', 'eighty']);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /--port must be a port number from 0 to 65535, got "eighty"/);
  });

  it('serves on the port it reports and stops cleanly on SIGTERM', async () => {
    ensurePluginBuilt();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', main, '--port', '0', '--proxy-url', 'http://127.0.0.1:9'],
      { cwd: ROOT }
    );
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line in: ${out}`)), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      const health = await fetch(`${url}/api/health`);
      assert.equal(health.status, 200);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
      }
    }
  });
});
