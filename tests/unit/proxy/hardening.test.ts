/**
 * Issue 14's bad input, answered 400 with a clear message instead of 500: JSON nested 10,000 deep (arrays, objects,
 * OTLP kvlists) at POST /api/rca and POST /v1/traces; absurd time bounds (`from=9000000000000000`,
 * `now-1000000000w`) on every route that takes a time, the Markdown export included; a number the database cannot
 * hold. And what the export echoes: trace ids are checked, span names with newlines stay on their line. `/metrics`
 * labels what matched no route as one value.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { deepJson } from '../../integration/reliability/support/fuzz';
import { chainTrace, otlp } from '../../support/otlp-spans';

const none = { prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined, alertIntervalMs: 0 };
const json = { 'content-type': 'application/json' };

describe('bad input is a 400 that says why, never a 500', () => {
  let proxy: RunningProxy;
  before(async () => {
    proxy = await startProxy({ port: 0, ...none });
  });
  after(() => proxy.close());

  it('JSON nested 10,000 deep at POST /api/rca and POST /v1/traces', async () => {
    const bodies = [
      ['/api/rca', `{"traces":${deepJson(10_000, 'kvlist')}}`],
      ['/api/rca', `{"traces":${deepJson(10_000, 'array')}}`],
      ['/api/rca', deepJson(10_000, 'object')],
      ['/v1/traces', deepJson(10_000, 'kvlist')],
      ['/v1/traces', deepJson(10_000, 'array')],
    ];
    for (const [path, body] of bodies) {
      const r = await fetch(`${proxy.url}${path}`, { method: 'POST', headers: json, body });
      const b = (await r.json()) as { error: { code: string; message: string } };
      assert.equal(r.status, 400, `${path} ${body.slice(0, 30)}: ${JSON.stringify(b)}`);
      assert.match(b.error.message, /nests deeper than 128 levels/);
    }
    // Within the bound, the same shape is read: a kvlist 20 deep is a normal attribute.
    const ok = await fetch(`${proxy.url}/v1/traces`, { method: 'POST', headers: json, body: deepJson(20, 'kvlist') });
    assert.equal(ok.status, 200, await ok.text());
  });

  it('absurd time bounds on every route that takes a time: 400 naming the parameter and the range', async () => {
    const routes = [
      '/api/golden',
      '/api/gpu/heatmap',
      '/api/services',
      '/api/services/rag/pods',
      '/api/pods/rag-0/kernel-events',
      '/api/annotations',
      '/api/traces',
      '/api/rca',
      '/api/compare?a=backend:vllm&b=backend:tgi',
      '/api/alerts',
      '/api/export/postmortem',
      '/api/export/postmortem?format=md&traceId=abc',
      '/api/runs',
    ];
    const bounds = [
      'from=9000000000000000&to=9000000000000001',
      'from=now-1000000000w&to=now-999999999w',
      'from=now-15m&to=now%2B1000000000w',
      `from=${'9'.repeat(400)}`,
      'to=-5',
      'from=99999-01-01&to=now',
    ];
    for (const route of routes) {
      for (const q of bounds) {
        const url = `${proxy.url}${route}${route.includes('?') ? '&' : '?'}${q}`;
        const r = await fetch(url);
        const text = await r.text();
        assert.equal(r.status, 400, `${route} ${q}: ${r.status} ${text.slice(0, 200)}`);
        const m = JSON.parse(text).error.message as string;
        assert.match(m, /out of range|is not a time/, `${route} ${q}: ${m}`);
        // Routes that read their range with timeRange name the parameter (the runs list says which time).
        if (route !== '/api/runs') assert.match(m, /^(from|to): /, `${route} ${q}: ${m}`);
      }
    }
    const r = await fetch(`${proxy.url}/api/traces?from=9000000000000000`);
    assert.match(
      (await r.json()).error.message,
      /from: time "9000000000000000" is out of range: times run from 1970-01-01 to 9999-12-31/
    );
  });

  it("a number the database cannot hold is a 400, not the database's error as a 500", async () => {
    const r = await fetch(`${proxy.url}/api/runs`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        runId: 'big-start',
        scenario: 's',
        workerId: 'w1',
        startMs: 1e308,
        target: 'http://x',
        options: {},
      }),
    });
    const b = await r.json();
    assert.equal(r.status, 400, JSON.stringify(b));
    // Refused by the contract before the database sees it (a bigint column would not hold it either).
    assert.match(b.error.message, /startMs: an epoch time in ms before 2100-01-01/);
  });

  it('the Markdown export echoes only trace ids, and what it echoes stays on its line', async () => {
    const bad = await fetch(
      `${proxy.url}/api/export/postmortem?traceId=${encodeURIComponent('abc`](http://evil.example)')}`
    );
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /traceId: .* is not a trace id/);
    const spans = chainTrace(7, Date.now() - 30_000, 900, 2).map((s) =>
      s.service === 'llm-vllm' ? { ...s, name: 'chat\n# Injected heading\n| x |' } : s
    );
    assert.equal(
      (await fetch(`${proxy.url}/v1/traces`, { method: 'POST', headers: json, body: JSON.stringify(otlp(spans)) }))
        .status,
      200
    );
    const md = await (
      await fetch(`${proxy.url}/api/export/postmortem?from=now-1h&to=now&traceId=${spans[0].traceId}`)
    ).text();
    assert.ok(md.includes('Injected heading'), md);
    assert.ok(!md.split('\n').some((l) => l.startsWith('# Injected')), md);
  });

  it('/metrics: what matched no route is one label value; a refused request on a route keeps its pattern', async () => {
    for (let i = 0; i < 20; i++) await (await fetch(`${proxy.url}/api/no-such-${i}/x`)).text();
    for (let i = 0; i < 5; i++)
      await (await fetch(`${proxy.url}/zz${i}`, { method: 'POST', headers: json, body: '{' })).text();
    await (await fetch(`${proxy.url}/api/services?from=nope`)).text();
    // An absolute-form request target is labelled by its path.
    const { rawRequest, requestBytes } = await import('../../integration/reliability/support/raw-http');
    await rawRequest(
      Number(new URL(proxy.url).port),
      requestBytes('GET', 'http://127.0.0.1/api/gpu/heatmap?from=nope')
    );
    const text = await (await fetch(`${proxy.url}/metrics`)).text();
    const routes = new Set(
      [...text.matchAll(/^hopscope_proxy_http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1])
    );
    assert.ok(routes.has('unmatched'));
    assert.ok(routes.has('/api/services'), [...routes].join(', '));
    assert.ok(routes.has('/api/gpu/heatmap'), [...routes].join(', '));
    assert.ok(
      [...routes].every((r) => r === 'unmatched' || /^\/(api|v1|metrics)/.test(r)),
      [...routes].join(', ')
    );
    assert.ok(![...routes].some((r) => /no-such|zz/.test(r)), [...routes].join(', '));
  });
});
