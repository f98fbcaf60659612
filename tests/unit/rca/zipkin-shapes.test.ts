/**
 * Real Zipkin traces (openzipkin/zipkin `zipkin-lens/testdata`, see tests/fixtures/rca/zipkin/README.md) as the
 * proxy gets them through a Collector (`zipkinToOtlp` → `otlpToSpans`): shared client/server span ids, clock skew,
 * calls to uninstrumented databases; and the same traces from a producer that sets no kinds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RcaAnswer, type Span } from '../../../contract';
import { rankTrace } from '../../../backend-proxy/src/rca';
import { otlpToSpans } from '../../../backend-proxy/src/otlp/normalize';
import { splitSharedSpans } from '../../../backend-proxy/src/rca/shared-spans';
import { type ZipkinSpan, withoutKinds, zipkinToOtlp } from '../../support/rca/zipkin';

const load = (name: string): ZipkinSpan[] =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, '../../fixtures/rca/zipkin', `${name}.json`), 'utf8')
  ) as ZipkinSpan[];
const spansOf = (z: ZipkinSpan[]): Span[] => otlpToSpans(zipkinToOtlp(z));
const services = (a: RcaAnswer): string[] => [...new Set(a.candidates.map((c) => c.service))];

test('skew.json: the shared client/server id is split (server under client, its async child under it), skew corrected; the same answer without kinds', () => {
  const z = load('skew');
  const split = splitSharedSpans(spansOf(z))!;
  const server = split.find((s) => s.service === 'serviceb' && s.name === 'post')!;
  assert.equal(server.spanId, '74280ae0c10d8063');
  assert.equal(server.parentSpanId, '74280ae0c10d8062');
  assert.equal(split.find((s) => s.name === 'async')!.parentSpanId, server.spanId);
  const a = rankTrace({ spans: spansOf(z) });
  const b = rankTrace({ spans: spansOf(withoutKinds(z)) });
  RcaAnswer.parse(b);
  assert.ok(
    a.missing.every((m) => !/duplicate/.test(m)),
    a.missing.join('\n')
  );
  assert.deepEqual(
    a.criticalPath.map((p) => `${p.service}:${p.operation}`),
    ['servicea:get', 'servicea:post', 'serviceb:post', 'serviceb:async']
  );
  assert.ok((a.criticalPath[2].skewCorrectedMs ?? 0) > 60, 'serviceb ran 65 ms early on its clock');
  assert.deepEqual(
    b.criticalPath.map((p) => [p.service, p.operation, p.kind, p.gapMs]),
    a.criticalPath.map((p) => [p.service, p.operation, p.kind, p.gapMs])
  );
  assert.deepEqual(
    b.candidates.map((c) => [c.service, c.score]),
    a.candidates.map((c) => [c.service, c.score])
  );
});

test('smartthings OAuth trace (175 spans, 41 shared ids): every span kept, the failing hop first, with or without kinds', () => {
  const z = load('smartthings-oauth-authorization');
  const a = rankTrace({ spans: spansOf(z) });
  assert.ok(
    a.missing.every((m) => !/duplicate/.test(m)),
    a.missing.join('\n')
  );
  assert.equal(a.candidates[0].service, 'auth');
  assert.equal(a.candidates[0].evidence[0].kind, 'error');
  const b = rankTrace({ spans: spansOf(withoutKinds(z)) });
  assert.equal(b.candidates[0].service, 'auth');
  // Without kinds only the incomplete zero-length fragments of a service calling itself stay ambiguous.
  assert.ok(
    b.missing.some((m) => /^nothing: [1-4] duplicate span/.test(m)),
    b.missing.join('\n')
  );
});

test('yelp trace: shared ids, calls to memcache and mysql named by their remote endpoint; the same top hop without kinds', () => {
  const z = load('yelp');
  const a = rankTrace({ spans: spansOf(z) });
  const b = rankTrace({ spans: spansOf(withoutKinds(z)) });
  assert.equal(services(a)[0], 'yelp_main/api_proxy');
  assert.equal(services(b)[0], services(a)[0]);
  // Kind-less leaves naming their peer are calls into it: memcache and mysql are hops in both answers.
  for (const peer of ['memcache', 'mysql']) {
    assert.ok(services(a).includes(peer) && services(b).includes(peer), `${services(a)} / ${services(b)}`);
  }
});
