/** The Prometheus adapter against the recorded answers of a real Prometheus 2.42 (fixtures/prometheus), replayed. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PrometheusSource } from '../../../backend-proxy/src/sources/prometheus';
import { callJson } from '../../../backend-proxy/src/sources/http';
import { fixture } from '../../support/fixtures';
import { tinyServer } from '../../support/otlp-spans';

const FX = fixture('prometheus');
function recorded(name: string): { status: number; type: string; body: string } {
  const head = readFileSync(`${FX}/${name}.headers.txt`, 'utf8');
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)![1]);
  const type = /Content-Type: ([^\r\n]+)/i.exec(head)?.[1] ?? 'application/json';
  return { status, type, body: readFileSync(`${FX}/${name}.json`, 'utf8') };
}

let server: Awaited<ReturnType<typeof tinyServer>>;
let hits: Record<string, number> = {};
before(async () => {
  server = await tinyServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const q = u.searchParams.get('query') ?? '';
    hits[q] = (hits[q] ?? 0) + 1;
    // The query text names the recorded answer to replay; `flaky` answers 503 once, then OK.
    let name = q;
    if (q === 'flaky') name = hits[q] === 1 ? 'query_range_timeout_1ms' : 'query_range_ok';
    if (q === 'hang') return; // never answers
    if (u.pathname === '/api/v1/nonexistent') name = 'not_found_path';
    const r = recorded(name);
    res.writeHead(r.status, { 'content-type': r.type });
    res.end(r.body);
  });
});
after(() => server.close());

const src = (): PrometheusSource => new PrometheusSource(server.url, 1000);

test('a matrix answer parses to ms timestamps; NaN is no data', async () => {
  const ok = await src().queryRange('query_range_ok', 0, 60_000, 5000);
  assert.ok(ok.length > 0);
  assert.ok(ok[0].points[0][0] > 1.7e12);
  const nan = await src().queryRange('query_range_nan', 0, 60_000, 5000);
  assert.ok(nan[0].points.every(([, v]) => v === null));
  assert.deepEqual(await src().queryRange('query_range_empty', 0, 60_000, 5000), []);
  const scalar = await src().query('query_instant_scalar');
  assert.equal(scalar.length, 1);
});

test('recorded error shapes become clear per-source errors', async () => {
  const cases: Array<[string, RegExp]> = [
    ['query_range_bad_expr', /prometheus: rejected the query \(bad_data, HTTP 400\): 1:17: parse error/],
    ['query_range_too_many_points', /bad_data.*11,000 points/],
    ['query_range_exec_error_many_to_many', /prometheus: could not evaluate the query \(execution, HTTP 422\)/],
    ['query_range_exec_error_same_labelset', /execution/],
    ['query_range_timeout_1ms', /prometheus: timed out evaluating the query \(timeout, HTTP 503\)/],
    ['query_range_delete_method', /prometheus: HTTP 405 \(Method Not Allowed\)/],
  ];
  for (const [q, re] of cases) await assert.rejects(src().queryRange(q, 0, 60_000, 5000), re, q);
});

test('retries once on 503 for GETs, never for POSTs', async () => {
  hits = {};
  const r = await src().queryRange('flaky', 0, 60_000, 5000);
  assert.ok(r.length > 0);
  assert.equal(hits.flaky, 2);
  hits = {};
  const post = await callJson(`${server.url}/api/v1/query_range?query=flaky`, {
    source: 'prometheus',
    method: 'POST',
    timeoutMs: 1000,
    retries: 3,
  });
  assert.equal(post.status, 503);
  assert.equal(hits.flaky, 1);
});

test('a hanging source is cut at the deadline', async () => {
  const t0 = performance.now();
  await assert.rejects(
    new PrometheusSource(server.url, 300).queryRange('hang', 0, 60_000, 5000),
    /no answer within 300 ms/
  );
  assert.ok(performance.now() - t0 < 2000);
});

test("a caller's abort ends a call as the deadline does", async () => {
  const ac = new AbortController();
  const t0 = performance.now();
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(
    callJson(`${server.url}/api/v1/query_range?query=hang`, {
      source: 'prometheus',
      timeoutMs: 5000,
      signal: ac.signal,
    }),
    /no answer within 5000 ms/
  );
  assert.ok(performance.now() - t0 < 2000);
});

test('URLs that are not already normalised (dot segments, upper-case scheme) are sent as URL parses them', async () => {
  const port = new URL(server.url).port;
  for (const u of [
    `${server.url}/x/../api/v1/query_range?query=query_range_ok`,
    `HTTP://127.0.0.1:${port}/api/v1/query_range?query=query_range_ok`,
  ]) {
    const r = await callJson<{ status: string }>(u, { source: 'prometheus', timeoutMs: 2000 });
    assert.equal(r.status, 200, u);
    assert.equal(r.body.status, 'success', u);
  }
});
