/**
 * Token scopes (finding 4 of issue 20): a load worker's token cannot rewrite alert rules, Grafana's read token cannot
 * save or delete, the admin token reads and writes, the old HOPSCOPE_PROXY_TOKEN is every scope. Over the real app.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadConfig } from '../../../backend-proxy/src/config';
import { scopedAuth, scopeOf } from '../../../backend-proxy/src/http/scopes';
import { tokensOf } from '../../../backend-proxy/src/config';

it('each request needs the scope of what it does', () => {
  assert.equal(scopeOf('GET', '/api/traces'), 'read');
  assert.equal(scopeOf('POST', '/api/rca'), 'read');
  assert.equal(scopeOf('POST', '/v1/traces'), 'ingest');
  assert.equal(scopeOf('POST', '/api/runs'), 'ingest');
  assert.equal(scopeOf('POST', '/api/runs/r1/heartbeat'), 'ingest');
  assert.equal(scopeOf('POST', '/api/runs/r1/finish'), 'ingest');
  assert.equal(scopeOf('PUT', '/api/alerts/rules'), 'admin');
  assert.equal(scopeOf('POST', '/api/alerts/rules/import'), 'admin');
  assert.equal(scopeOf('POST', '/api/alerts/evaluate'), 'admin', 'a round on demand changes state: Editors only');
  assert.equal(scopeOf('POST', '/api/rca/answers'), 'admin');
  assert.equal(scopeOf('DELETE', '/api/runs/r1'), 'admin');
});

it('scoped tokens: ingest cannot write rules, read cannot save, admin can, the old token is every scope', async () => {
  const config = loadConfig(
    { readToken: 'r-token', ingestToken: 'i-token', adminToken: 'a-token', token: 'legacy' },
    {}
  );
  const app = express();
  const ok = (_q: express.Request, res: express.Response): void => void res.json({ ok: true });
  app.use('/api', scopedAuth(tokensOf(config)));
  app.put('/api/alerts/rules', ok);
  app.get('/api/traces', ok);
  app.get('/api/runs/r1', ok);
  app.post('/api/runs/r1/heartbeat', ok);
  app.post('/api/rca/answers', ok);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, token?: string): Promise<number> => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    await r.text();
    return r.status;
  };
  try {
    assert.equal(await call('PUT', '/api/alerts/rules', 'i-token'), 403, 'a load worker cannot rewrite alert rules');
    assert.equal(await call('PUT', '/api/alerts/rules', 'r-token'), 403, 'Grafana read token cannot either');
    assert.equal(await call('PUT', '/api/alerts/rules', 'a-token'), 200);
    assert.equal(await call('PUT', '/api/alerts/rules', 'legacy'), 200, 'the old token is every scope');
    assert.equal(await call('POST', '/api/rca/answers', 'r-token'), 403);
    assert.equal(await call('POST', '/api/rca/answers', 'a-token'), 200);
    assert.equal(await call('GET', '/api/traces', 'r-token'), 200);
    assert.equal(await call('GET', '/api/traces', 'a-token'), 200, 'admin reads too');
    assert.equal(await call('GET', '/api/traces', 'i-token'), 403, 'ingest does not read traces');
    assert.equal(await call('GET', '/api/runs/r1', 'i-token'), 200, 'a load worker reads runs back');
    assert.equal(await call('POST', '/api/runs/r1/heartbeat', 'i-token'), 200);
    assert.equal(await call('POST', '/api/runs/r1/heartbeat', 'r-token'), 403);
    assert.equal(await call('GET', '/api/traces', 'wrong'), 401);
    assert.equal(await call('GET', '/api/traces'), 401);
  } finally {
    server.close();
  }
});

it('a non-loopback bind needs some token; any scoped one does', () => {
  assert.throws(() => loadConfig({ host: '0.0.0.0' }, {}), /without a token/);
  assert.doesNotThrow(() => loadConfig({ host: '0.0.0.0' }, { HOPSCOPE_READ_TOKEN: 'r' }));
});
