/** Postmortem export: Markdown with ranked causes and links back; PNG of an app view rendered in Chromium. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, hex, otlp, tinyServer } from '../../support/otlp-spans';

let proxy: RunningProxy;
let app: Awaited<ReturnType<typeof tinyServer>>;
const T0 = Date.now() - 60_000;

before(async () => {
  app = await tinyServer((req, res) => {
    if (req.url!.startsWith('/a/hopscope-rca-app/')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><body style="background:#111;color:#eee"><h1>Trace view</h1></body>');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  proxy = await startProxy({
    port: 0,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    appUrl: app.url,
  });
  const spans = [];
  for (let i = 0; i < 30; i++)
    spans.push(...chainTrace(i, T0 + i * 1000, i === 20 ? 1500 : 100 + (i % 5), i === 20 ? 2 : 1));
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
});
after(async () => {
  await proxy?.close();
  await app?.close();
});

test('Markdown: time range, trace ids, ranked causes with evidence, links back', async () => {
  const id = hex(21, 32);
  const r = await fetch(
    `${proxy.url}/api/export/postmortem?from=${T0}&to=${T0 + 60_000}&traceId=${id},${'e'.repeat(32)}&view=/a/hopscope-rca-app/traces/${id}`
  );
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type')!, /text\/markdown/);
  const text = await r.text();
  assert.match(text, new RegExp(`Time range:\\*\\* ${new Date(T0).toISOString()}`));
  assert.ok(text.includes(`[\`${id}\`](${app.url}/a/hopscope-rca-app/traces/${id}?from=${T0}`));
  assert.match(text, /\| 1 \| llm-vllm \| llm-vllm-0 \|/);
  assert.match(text, /evidence:\n- `/);
  assert.match(text, /Root cause unavailable: trace e{32} not found/);
});

test(
  'PNG: a view of the app rendered in Chromium; only app paths accepted',
  { skip: existsSync('/usr/bin/chromium') ? false : 'no /usr/bin/chromium' },
  async () => {
    const r = await fetch(
      `${proxy.url}/api/export/postmortem?format=png&view=/a/hopscope-rca-app/traces/${hex(21, 32)}`
    );
    assert.equal(
      r.status,
      200,
      await r
        .clone()
        .text()
        .catch(() => '')
    );
    assert.equal(r.headers.get('content-type'), 'image/png');
    const buf = Buffer.from(await r.arrayBuffer());
    assert.deepEqual([...buf.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.ok(buf.length > 1000);
    for (const view of ['//evil.example/x', 'http://evil.example/', '/a/<script>']) {
      assert.equal(
        (await fetch(`${proxy.url}/api/export/postmortem?format=png&view=${encodeURIComponent(view)}`)).status,
        400,
        view
      );
    }
    const missing = await fetch(`${proxy.url}/api/export/postmortem?format=png&view=/nope`);
    assert.equal(missing.status, 502);
  }
);
