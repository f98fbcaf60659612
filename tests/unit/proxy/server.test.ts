import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthAnswer } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';

let proxy: RunningProxy;
const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined };

before(async () => {
  proxy = await startProxy({ port: 0, token: 'secret', bodyLimitBytes: 2048, ...none });
});
after(() => proxy.close());

const auth = { authorization: 'Bearer secret' };

test('/api needs the bearer token when one is set: 401 JSON otherwise', async () => {
  for (const headers of [
    {} as Record<string, string>,
    { authorization: 'Bearer wrong' },
    { authorization: 'Basic secret' },
  ]) {
    const r = await fetch(`${proxy.url}/api/health`, { headers });
    assert.equal(r.status, 401);
    const b = await r.json();
    assert.equal(b.error.code, 'unauthorized');
  }
  const ok = await fetch(`${proxy.url}/api/health`, { headers: auth });
  assert.equal(ok.status, 200);
});

test('health answers the contract shape with the trace source', async () => {
  const b = HealthAnswer.parse(await (await fetch(`${proxy.url}/api/health`, { headers: auth })).json());
  assert.deepEqual(
    b.sources.map((s) => s.source),
    ['embedded-store', 'database']
  );
  assert.equal(b.ok, true);
});

test('unknown routes are JSON 404s', async () => {
  for (const path of ['/api/nope', '/nope']) {
    const r = await fetch(`${proxy.url}${path}`, { headers: auth });
    assert.equal(r.status, 404);
    assert.equal((await r.json()).error.code, 'not_found');
  }
});

test('CORS is closed by default', async () => {
  const r = await fetch(`${proxy.url}/api/health`, { headers: { ...auth, origin: 'http://evil.example' } });
  assert.equal(r.headers.get('access-control-allow-origin'), null);
});

test('bodies over the limit get 413 JSON; malformed JSON gets 400', async () => {
  const big = await fetch(`${proxy.url}/api/rca`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ x: 'a'.repeat(5000) }),
  });
  assert.equal(big.status, 413);
  assert.equal((await big.json()).error.code, 'payload_too_large');
  const bad = await fetch(`${proxy.url}/api/rca`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{nope',
  });
  assert.equal(bad.status, 400);
});

test('bad parameters are 400 with a message', async () => {
  const r = await fetch(`${proxy.url}/api/traces?from=yesterday`, { headers: auth });
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /from/);
  const inj = await fetch(`${proxy.url}/api/traces?service=${encodeURIComponent('a"} or {x="')}`, { headers: auth });
  assert.equal(inj.status, 400);
});

test('GET /metrics serves hopscope_proxy_* metrics without a token', async () => {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  assert.match(text, /hopscope_proxy_http_requests_total/);
});
