/**
 * DNS rebinding on the chain's control API (3319): without HOPSCOPE_CHAIN_TOKEN it binds loopback only, so a web
 * page could still inject faults through a rebound name. Such a Host is a 403 `forbidden_host` on every route,
 * loopback names are served, and with a token any Host reaches the token check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { FOREIGN_HOSTS, loopbackHosts, requestWithHost } from '../../support/with-host';

const quiet = {
  gatewayPort: 0,
  controlPort: 0,
  timeScale: 0.05,
  logLevel: 'silent' as const,
  tracing: false,
  cudaStandIn: false,
};

describe('chain control API Host allow-list', () => {
  let open: RunningChain;
  let tokened: RunningChain;
  before(async () => {
    open = await startChain(quiet);
    tokened = await startChain({ ...quiet, controlToken: 'sekret' });
  });
  after(async () => {
    await open?.stop();
    await tokened?.stop();
  });

  it('without a token a foreign Host is a 403 on every route (no fault injected); loopback names are served', async () => {
    for (const host of FOREIGN_HOSTS) {
      for (const [method, path] of [
        ['GET', '/healthz'],
        ['GET', '/targets'],
        ['GET', '/topology'],
        ['POST', '/faults'],
        ['PUT', '/config'],
      ]) {
        const r = await requestWithHost(open.controlUrl, host, {
          method,
          path,
          headers: { 'content-type': 'application/json' },
          body: method === 'GET' ? undefined : JSON.stringify({ target: 'rag', kind: 'latency', magnitude: 1 }),
        });
        assert.equal(r.status, 403, `${host} ${method} ${path}: ${r.status}`);
        assert.equal(JSON.parse(r.body).error.code, 'forbidden_host');
      }
    }
    assert.deepEqual(open.faults.list(), [], 'no fault was injected');
    const port = Number(new URL(open.controlUrl).port);
    for (const host of loopbackHosts(port)) {
      assert.equal((await requestWithHost(open.controlUrl, host, { path: '/healthz' })).status, 200, host);
    }
  });

  it('with a token any Host reaches the token check', async () => {
    const r = await requestWithHost(tokened.controlUrl, 'hopscope-chain.hopscope.svc:3319', { path: '/faults' });
    assert.equal(r.status, 401);
    const ok = await requestWithHost(tokened.controlUrl, 'evil.example', {
      path: '/faults',
      headers: { authorization: 'Bearer sekret' },
    });
    assert.equal(ok.status, 200);
  });
});
