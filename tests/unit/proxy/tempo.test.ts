/** The Tempo adapter against Tempo's own recorded/derived answers (../shared/fixtures/tempo), replayed by a tiny server. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TraceDetail, TraceList } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { buildTraceQL } from '../../../backend-proxy/src/sources/tempo';
import { fixture } from '../../support/fixtures';
import { tinyServer } from '../../support/otlp-spans';

const FX = fixture('tempo');
const fx = (f: string): string => readFileSync(`${FX}/${f}`, 'utf8');
const V2_DOCS = '5b8efff798038103d269b633813fc700';
const VULTURE = '3149195ffb0bec05347b48efe8ecc1b0';
const OLD_V1 = '000000000000000060ba2abb44f13eae';

let tempo: Awaited<ReturnType<typeof tinyServer>>;
let proxy: RunningProxy;
const seen: string[] = [];

before(async () => {
  tempo = await tinyServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    seen.push(`${u.pathname}${u.search}`);
    const json = (body: string, status = 200): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (u.pathname === '/ready') return void res.end('ready');
    if (u.pathname === `/api/v2/traces/${V2_DOCS}`) return json(fx('docs_v2_trace_by_id.json'));
    if (u.pathname === `/api/v2/traces/${VULTURE}`) {
      // Same trace, as Tempo answers when some blocks could not be read.
      const body = JSON.parse(fx('derived_v2_trace_by_id_from_vulture.json'));
      return json(JSON.stringify({ ...body, status: 'PARTIAL', message: 'some blocks failed' }));
    }
    // An old Tempo without /api/v2: 404 text, the v1 path serves `batches` (old OTLP names).
    if (u.pathname.startsWith('/api/v2/traces/')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return void res.end('404 page not found\n');
    }
    if (u.pathname === `/api/traces/${OLD_V1}`) return json(fx('grafana_docs_v1_trace_old_otlp_schema.json'));
    if (u.pathname.startsWith('/api/traces/')) {
      res.writeHead(404);
      return void res.end();
    }
    if (u.pathname === '/api/search') {
      const body = JSON.parse(fx('docs_search_traceql_status_error.json'));
      // Tempo strips leading zeros from search ids.
      body.traces.push({
        traceID: '60ba2abb44f13eae',
        rootServiceName: 'db',
        rootTraceName: 'q',
        startTimeUnixNano: '1684778327699392724',
        durationMs: 5,
      });
      return json(JSON.stringify(body));
    }
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('unexpected path');
  });
  proxy = await startProxy({
    port: 0,
    tempoUrl: tempo.url,
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
  });
});
after(async () => {
  await proxy.close();
  await tempo.close();
});

const getJson = async (path: string): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${proxy.url}${path}`);
  return { status: r.status, body: await r.json() };
};

test('v2 trace by id: base64 ids become hex', async () => {
  const { body } = await getJson(`/api/traces/${V2_DOCS}`);
  const d = TraceDetail.parse(body);
  assert.equal(d.spans[0].traceId, V2_DOCS);
  assert.equal(d.spans[0].spanId, 'eee19b7ec3c1b100');
  assert.equal(d.spans[0].service, 'my.service');
  assert.equal(d.partial, undefined);
});

test('v2 PARTIAL is reported as partial', async () => {
  const d = TraceDetail.parse((await getJson(`/api/traces/${VULTURE}`)).body);
  assert.equal(d.partial, true);
  assert.equal(d.spans.length, 6);
  assert.ok(d.spans.every((s) => s.traceId === VULTURE));
});

test('v1 batches with old OTLP names, reached with a leading-zero-stripped id', async () => {
  const d = TraceDetail.parse((await getJson('/api/traces/60ba2abb44f13eae')).body);
  assert.equal(d.traceId, OLD_V1);
  assert.equal(d.spans[0].service, 'db');
  assert.ok(seen.includes(`/api/traces/${OLD_V1}`));
  assert.equal((await getJson(`/api/traces/${'a'.repeat(32)}`)).status, 404);
});

test('TraceQL search: ids padded, query built from parameters', async () => {
  const { body } = await getJson(
    '/api/traces?service=shop-backend&status=error&minDurationMs=100&from=1684778000000&to=1684779000000'
  );
  const list = TraceList.parse(body);
  assert.ok(
    list.traces.some(
      (t) =>
        t.traceId === '2f3e0cee77ae5dc9c17ade3689eb2e54' && t.rootService === 'shop-backend' && t.durationMs === 557
    )
  );
  assert.ok(list.traces.some((t) => t.traceId === OLD_V1));
  const q = seen.find((s) => s.startsWith('/api/search'))!;
  const params = new URLSearchParams(q.split('?')[1]);
  assert.equal(params.get('q'), '{ resource.service.name = "shop-backend" && duration >= 100ms && status = error }');
  assert.equal(params.get('start'), '1684778000');
});

test('TraceQL literals are escaped so nothing is injected', () => {
  assert.equal(buildTraceQL({ service: 'a" || true || "' }), '{ resource.service.name = "a\\" || true || \\"" }');
  assert.equal(buildTraceQL({ service: 'a\\' }), '{ resource.service.name = "a\\\\" }');
  assert.throws(() => buildTraceQL({ service: 'a\nb' }));
});

test('health reports Tempo', async () => {
  const { body } = await getJson('/api/health');
  assert.deepEqual(
    body.sources.map((s: { source: string; ok: boolean }) => [s.source, s.ok]),
    [
      ['tempo', true],
      ['database', true],
    ]
  );
});

test('Tempo unreachable: search degrades with a per-source error, trace by id is 502', async () => {
  const dead = await startProxy({
    port: 0,
    tempoUrl: 'http://127.0.0.1:1',
    prometheusUrl: undefined,
    exporterUrls: [],
    chainControlUrl: undefined,
    sourceTimeoutMs: 500,
  });
  try {
    const r = await fetch(`${dead.url}/api/traces`);
    assert.equal(r.status, 200);
    const b = await r.json();
    assert.deepEqual(b.traces, []);
    assert.equal(b.sources[0].ok, false);
    assert.match(b.sources[0].error, /tempo: unreachable/);
    const one = await fetch(`${dead.url}/api/traces/${V2_DOCS}`);
    assert.equal(one.status, 502);
    // Every span-derived view still answers, with the reason.
    for (const path of ['/api/services', '/api/compare?a=backend:vllm&b=backend:tgi', '/api/golden?backend=tgi']) {
      const x = await fetch(`${dead.url}${path}`);
      assert.equal(x.status, 200, path);
      const body = await x.json();
      const tempo = body.sources.find((s: { source: string }) => s.source === 'tempo');
      assert.equal(tempo.ok, false, path);
      assert.match(tempo.error, /tempo: unreachable/, path);
    }
  } finally {
    await dead.close();
  }
});

test('window views sample traces across the whole window (slices + the failed ones), each trace fetched once', async () => {
  seen.length = 0;
  const to = 1684778400000;
  const from = to - 3600_000;
  const { status, body } = await getJson(`/api/services?from=${from}&to=${to}`);
  assert.equal(status, 200);
  const searches = seen.filter((p) => p.startsWith('/api/search')).map((p) => new URLSearchParams(p.split('?')[1]));
  assert.equal(searches.length, 11);
  // Ten slices that tile the window, not its last minutes only.
  const slices = searches
    .filter((q) => !/status = error/.test(q.get('q')!))
    .map((q) => [Number(q.get('start')), Number(q.get('end'))])
    .sort((a, b) => a[0] - b[0]);
  assert.equal(slices.length, 10);
  assert.equal(slices[0][0], from / 1000);
  assert.equal(slices[9][1], to / 1000);
  for (let i = 1; i < slices.length; i++) assert.ok(slices[i][0] <= slices[i - 1][1], 'slices leave no gap');
  assert.ok(
    searches.some((q) => /status = error/.test(q.get('q')!)),
    'the failed traces are asked for too'
  );
  // The two ids the searches return are fetched once each, whatever the number of searches that returned them.
  const fetched = seen.filter((p) => /^\/api\/(v2\/)?traces\//.test(p));
  assert.equal(fetched.filter((p) => p === `/api/traces/${OLD_V1}`).length, 1);
  // The trace Tempo served (old v1 schema) makes the services; the one it lost (404) is skipped, not an error.
  assert.ok(
    body.services.some((s: { service: string }) => s.service === 'db'),
    JSON.stringify(body.services)
  );
  assert.equal(body.sources[0].ok, true);
});

test('sort=duration on Tempo: the slowest of up to 1,000 traces of the range (Tempo cannot order a search)', async () => {
  seen.length = 0;
  const { body } = await getJson('/api/traces?sort=duration&limit=1');
  const list = TraceList.parse(body);
  assert.deepEqual(
    list.traces.map((t) => t.durationMs),
    [557]
  );
  const q = new URLSearchParams(seen.find((p) => p.startsWith('/api/search'))!.split('?')[1]);
  assert.equal(q.get('limit'), '1000');
});
