/**
 * DNS rebinding on the exporter: without HOPSCOPE_BPF_TOKEN it binds loopback only, so a web page could still read
 * kernel events, remap pids to pods or take every SSE slot through a rebound name. Such a Host is a 403
 * `forbidden_host` on every route; loopback names are served; with a token, any Host reaches the token check.
 * Replay mode (no eBPF needed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { FOREIGN_HOSTS, loopbackHosts, requestWithHost } from '../../support/with-host';

describe('bpf-exporter Host allow-list', () => {
  let dir = '';
  let open: Exporter;
  let tokened: Exporter;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `hopscope-bpf-host-${process.pid}-`));
    writeFileSync(join(dir, 'empty.jsonl'), '');
    const env = { HOPSCOPE_BPF_PORT: '0', HOPSCOPE_BPF_NODE: 'n', HOPSCOPE_BPF_REPLAY: join(dir, 'empty.jsonl') };
    const log = pino({ level: 'silent' });
    open = await startExporter(loadConfig(env), log);
    tokened = await startExporter(loadConfig({ ...env, HOPSCOPE_BPF_TOKEN: 'sekret-sekret-sekret-42' }), log);
  });
  after(async () => {
    await open?.stop();
    await tokened?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('without a token a foreign Host is a 403 on every route; loopback names are served', async () => {
    for (const host of FOREIGN_HOSTS) {
      for (const [method, path] of [
        ['GET', '/health'],
        ['GET', '/metrics'],
        ['GET', '/events'],
        ['GET', '/events/stream'],
        ['POST', '/register'],
      ]) {
        const r = await requestWithHost(open.url, host, {
          method,
          path,
          headers: { 'content-type': 'application/json' },
          body: method === 'POST' ? JSON.stringify({ pid: 1, pod: 'evil' }) : undefined,
        });
        assert.equal(r.status, 403, `${host} ${method} ${path}: ${r.status}`);
        assert.equal(JSON.parse(r.body).error.code, 'forbidden_host');
      }
    }
    assert.equal(open.pipeline.pids.list().length, 0, 'no registration got through');
    for (const host of loopbackHosts(open.port)) {
      assert.equal((await requestWithHost(open.url, host, { path: '/health' })).status, 200, host);
    }
  });

  it('with a token any Host reaches the token check', async () => {
    const r = await requestWithHost(tokened.url, 'hopscope-bpf-exporter.hopscope.svc:3302', { path: '/events' });
    assert.equal(r.status, 401);
    const ok = await requestWithHost(tokened.url, 'evil.example', {
      path: '/events',
      headers: { authorization: 'Bearer sekret-sekret-sekret-42' },
    });
    assert.equal(ok.status, 200);
  });
});
