/**
 * The demo host page (3300) against a web page's attacks, on a real host: a rebound DNS name (foreign Host header) is
 * refused on every path; the plugin settings (where the proxy token goes) are written only by an Admin, only from the
 * host's own origin, only as JSON, and `jsonData.proxyUrl` only as an http(s) URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startHost, type RunningHost } from '../../host/server';
import { DIST, ensurePluginBuilt } from '../../support/host';
import { FOREIGN_HOSTS, loopbackHosts, requestWithHost } from '../../support/with-host';

const SETTINGS = '/api/plugins/hopscope-rca-app/settings';

const send = (
  host: RunningHost,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string
): Promise<{ status: number; body: string }> =>
  requestWithHost(host.url, headers.host, { method, path, headers, body });

describe('host page: Host allow-list and settings writes', () => {
  let admin: RunningHost;
  let viewer: RunningHost;
  before(async () => {
    ensurePluginBuilt();
    admin = await startHost({ port: 0, dist: DIST, proxyUrl: 'http://127.0.0.1:9', proxyToken: 'tok' });
    viewer = await startHost({ port: 0, dist: DIST, proxyUrl: 'http://127.0.0.1:9', orgRole: 'Viewer' });
  });
  after(async () => {
    await admin?.close();
    await viewer?.close();
  });

  it('a foreign Host (DNS rebinding) is a 403 on every path; loopback names are served', async () => {
    for (const h of FOREIGN_HOSTS) {
      for (const path of ['/a/hopscope-rca-app/', SETTINGS, '/api/plugin-proxy/hopscope-rca-app/api/health']) {
        const r = await send(admin, 'GET', path, { host: h });
        assert.equal(r.status, 403, `${h} ${path}: ${r.status}`);
        assert.equal(JSON.parse(r.body).error.code, 'forbidden_host');
      }
    }
    for (const h of loopbackHosts(admin.port)) {
      assert.equal((await send(admin, 'GET', SETTINGS, { host: h })).status, 200, h);
    }
  });

  const json = (origin?: string, site?: string): Record<string, string> => ({
    host: `127.0.0.1:${admin.port}`,
    'content-type': 'application/json',
    ...(origin ? { origin } : {}),
    ...(site ? { 'sec-fetch-site': site } : {}),
  });
  const evilUrl = JSON.stringify({ jsonData: { proxyUrl: 'http://evil.example:80' } });

  it('a cross-origin write is refused and changes nothing', async () => {
    for (const [origin, site] of [
      ['http://evil.example', 'cross-site'],
      ['http://evil.example', undefined],
      [undefined, 'cross-site'],
      [undefined, 'same-site'],
      ['null', undefined],
      [`http://localhost:${admin.port}`, 'same-site'],
    ] as const) {
      const r = await send(admin, 'POST', SETTINGS, json(origin, site), evilUrl);
      assert.equal(r.status, 403, `${origin} ${site}: ${r.body}`);
      assert.equal(JSON.parse(r.body).error.code, 'cross_origin');
    }
    // A form post (text/plain: no CORS preflight) is refused as well.
    const form = await send(admin, 'POST', SETTINGS, { ...json(), 'content-type': 'text/plain' }, evilUrl);
    assert.equal(form.status, 415);
    assert.equal(admin.settings.jsonData.proxyUrl, 'http://127.0.0.1:9');
  });

  it('proxyUrl must be an http(s) URL', async () => {
    const origin = `http://127.0.0.1:${admin.port}`;
    for (const bad of ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_x', 'javascript:alert(1)', 'not a url', 42]) {
      const r = await send(
        admin,
        'POST',
        SETTINGS,
        json(origin, 'same-origin'),
        JSON.stringify({ jsonData: { proxyUrl: bad } })
      );
      assert.equal(r.status, 400, `${bad}: ${r.body}`);
      assert.match(JSON.parse(r.body).error.message, /proxyUrl/);
    }
    assert.equal(admin.settings.jsonData.proxyUrl, 'http://127.0.0.1:9');
    const ok = await send(
      admin,
      'POST',
      SETTINGS,
      json(origin, 'same-origin'),
      JSON.stringify({ jsonData: { proxyUrl: 'https://proxy.example:3301' } })
    );
    assert.equal(ok.status, 200, ok.body);
    assert.equal(admin.settings.jsonData.proxyUrl, 'https://proxy.example:3301');
    // A non-browser client (no Origin, no Sec-Fetch-Site) on a loopback Host is the operator: allowed.
    const cli = await send(
      admin,
      'POST',
      SETTINGS,
      json(),
      JSON.stringify({ jsonData: { proxyUrl: 'http://127.0.0.1:9' } })
    );
    assert.equal(cli.status, 200, cli.body);
  });

  it('only an Admin writes the settings', async () => {
    const r = await send(
      viewer,
      'POST',
      SETTINGS,
      {
        host: `127.0.0.1:${viewer.port}`,
        'content-type': 'application/json',
        origin: `http://127.0.0.1:${viewer.port}`,
      },
      evilUrl
    );
    assert.equal(r.status, 403, r.body);
    assert.equal(JSON.parse(r.body).error.code, 'forbidden');
    assert.equal(viewer.settings.jsonData.proxyUrl, 'http://127.0.0.1:9');
  });
});
