/**
 * The host's data proxy, without a browser: it follows the built plugin.json route (URL template, bearer header),
 * keeps method, query and body, passes status codes through, streams responses as they come, and answers 502 JSON
 * when the proxy is down.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';

import type { RunningHost } from '../../host/server';
import { startTestHost } from '../../support/host';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  cookie?: string;
  body: string;
}

describe('host data proxy', () => {
  const seen: Seen[] = [];
  let releaseStream: () => void = () => undefined;
  let upstream: Server;
  let upstreamUrl: string;
  let host: RunningHost;

  before(async () => {
    upstream = createServer(async (req: IncomingMessage, res) => {
      let body = '';
      for await (const chunk of req) {
        body += chunk;
      }
      seen.push({
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization,
        cookie: req.headers.cookie,
        body,
      });
      if (req.url === '/api/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        // The second event waits until the test has received the first one: proof the host does not buffer.
        releaseStream = () => res.end('data: second\n\n');
        return;
      }
      if (req.url?.startsWith('/api/missing')) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'not_found', message: 'nope' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    host = await startTestHost({ proxyUrl: upstreamUrl, proxyToken: 'tok-1' });
  });
  after(async () => {
    await host?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((ok) => upstream.close(() => ok()));
  });

  it('GET with a query reaches {{proxyUrl}}/api/... with the bearer token, not the browser cookie', async () => {
    const res = await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/traces?from=now-1h&service=rag`, {
      headers: { cookie: 'grafana_session=abc', authorization: 'Bearer from-browser' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-upstream'), 'yes');
    assert.deepEqual(await res.json(), { ok: true });
    const last = seen.at(-1)!;
    assert.equal(last.url, '/api/traces?from=now-1h&service=rag');
    assert.equal(last.authorization, 'Bearer tok-1', 'the route header replaces whatever the browser sent');
    assert.equal(last.cookie, undefined);
  });

  it('POST bodies are forwarded and upstream status codes passed through', async () => {
    const res = await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/rca`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ traces: [] }),
    });
    assert.equal(res.status, 200);
    assert.equal(seen.at(-1)!.method, 'POST');
    assert.equal(seen.at(-1)!.body, '{"traces":[]}');
    const missing = await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/missing`);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.code, 'not_found');
  });

  it('streams: the first event arrives before the upstream has finished', async () => {
    const res = await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/stream`);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /data: first/);
    releaseStream();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      rest += new TextDecoder().decode(r.value);
    }
    assert.match(rest, /data: second/);
  });

  it('settings changes apply to the next request (the route is rendered per request)', async () => {
    host.settings.update({ secureJsonData: { proxyToken: 'tok-2' } });
    await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/health`);
    assert.equal(seen.at(-1)!.authorization, 'Bearer tok-2');
    host.settings.update({ jsonData: { proxyUrl: 'http://127.0.0.1:9' } });
    const res = await fetch(`${host.url}/api/plugin-proxy/hopscope-rca-app/api/health`);
    assert.equal(res.status, 502);
    const body = await res.json();
    assert.equal(body.error.code, 'proxy_unreachable');
    assert.match(body.error.message, /127\.0\.0\.1:9/);
    host.settings.update({ jsonData: { proxyUrl: upstreamUrl } });
  });

  it('serves the built plugin and the host page, never the host code under /public/plugins', async () => {
    const mod = await fetch(`${host.url}/public/plugins/hopscope-rca-app/module.js`);
    assert.equal(mod.status, 200);
    assert.match(await mod.text(), /define\(\[/);
    const page = await fetch(`${host.url}/a/hopscope-rca-app/traces?theme=light`);
    const html = await page.text();
    assert.match(html, /"theme":"light"/);
    assert.match(html, /window\.grafanaBootData/);
    const escape = await fetch(`${host.url}/public/plugins/hopscope-rca-app/..%2f..%2fpackage.json`);
    assert.notEqual(escape.status, 200);
  });
});
