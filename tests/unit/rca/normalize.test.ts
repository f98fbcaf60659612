import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Span } from '../../../contract';
import { OtlpFormatError, otlpToSpans, tempoPartial } from '../../../backend-proxy/src/otlp/normalize';
import { FIXTURES_DIR } from '../../support/fixtures';
import { type ZipkinSpan, withoutKinds, zipkinToOtlp } from '../../support/rca/zipkin';

const FIX = FIXTURES_DIR;
const load = (p: string): unknown => JSON.parse(readFileSync(join(FIX, p), 'utf8'));

test('Tempo v1 (batches) and v2 (trace.resourceSpans) of the same trace give identical spans with hex ids', () => {
  const v1 = otlpToSpans(load('tempo/derived_v1_trace_by_id_from_vulture.json'));
  const v2 = otlpToSpans(load('tempo/derived_v2_trace_by_id_from_vulture.json'));
  const raw = otlpToSpans(load('tempo/tempo_vulture_trace_jsonpb.json'));
  assert.ok(v1.length > 0);
  assert.deepEqual(v1, v2);
  assert.deepEqual(v1, raw);
  for (const s of v1) {
    Span.parse(s);
    assert.match(s.traceId, /^[0-9a-f]{32}$/);
    assert.match(s.spanId, /^[0-9a-f]{16}$/);
    assert.equal(s.service, 'tempo-vulture');
    assert.ok(s.endMs >= s.startMs);
  }
  assert.equal(typeof v1[0].resource['vulture-process-int-01'], 'number');
});

test('docs v2 example: base64 ids decode to the documented hex, kind and nanos convert', () => {
  const [s] = otlpToSpans(load('tempo/docs_v2_trace_by_id.json'));
  assert.equal(s.traceId, '5b8efff798038103d269b633813fc700');
  assert.equal(s.spanId, Buffer.from('7uGbfsPBsQA=', 'base64').toString('hex'));
  assert.equal(s.kind, 'server');
  assert.equal(s.startMs, 1689969302000);
  assert.equal(s.endMs, 1689970000000);
  assert.equal(s.status, 'unset');
  assert.equal(s.service, 'my.service');
  assert.equal(s.attributes['otel.scope.name'], 'my.library');
});

test('old OTLP names (instrumentationLibrarySpans) and hex ids with numeric kind', () => {
  const [old] = otlpToSpans(load('tempo/grafana_docs_v1_trace_old_otlp_schema.json'));
  assert.equal(old.traceId, '0000000000000000' + '60ba2abb44f13eae');
  assert.equal(old.parentSpanId, Buffer.from('OY8PIaPbma4=', 'base64').toString('hex'));
  assert.equal(old.attributes['http.status_code'], 200);
  assert.equal(old.service, 'db');
  // Hex ids with Tempo search's stripped leading zeros are left-padded.
  assert.equal(
    otlpToSpans({
      resourceSpans: [
        { scopeSpans: [{ spans: [{ traceId: 'b1586c3c8c34d', spanId: 'abc', name: 'a', startTimeUnixNano: '1' }] }] },
      ],
    })[0].traceId,
    'b1586c3c8c34d'.padStart(32, '0')
  );
  const [hex] = otlpToSpans(load('tempo/tempo_pkg_tempopb_trace_v1_batches_fixture.json'));
  assert.equal(hex.traceId, '5b8efff798038103d269b633813fc60c');
  assert.equal(hex.parentSpanId, 'eee19b7ec3c1b173');
  assert.equal(hex.kind, 'server');
});

test('every LLM-trace fixture converts; parent links resolve inside the trace', () => {
  const dir = join(FIX, 'llm-traces/otlp_converted');
  let total = 0;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const spans = otlpToSpans(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    assert.ok(spans.length > 0, f);
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) Span.parse(s);
    // At most one span per file points outside it (the C# sample's root was started by an upstream caller).
    const orphans = spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
    assert.ok(orphans.length <= 1, `${f}: ${orphans.length} spans with a missing parent`);
    total += spans.length;
  }
  assert.ok(total > 50);
});

test('all AnyValue kinds, numeric nanos, status codes and timeouts', () => {
  const body = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'rag' } },
            { key: 'k8s.pod.name', value: { stringValue: 'rag-0' } },
          ],
        },
        scopeSpans: [
          {
            spans: [
              {
                traceId: 'AB'.repeat(16),
                spanId: '01'.repeat(8),
                parentSpanId: '',
                name: 'x',
                kind: 'SPAN_KIND_CLIENT',
                startTimeUnixNano: 1_700_000_000_000_000_000,
                endTimeUnixNano: '1700000000250000000',
                status: { code: 'STATUS_CODE_ERROR', message: 'upstream request timeout' },
                attributes: [
                  { key: 'b', value: { boolValue: true } },
                  { key: 'd', value: { doubleValue: 0.5 } },
                  { key: 'i', value: { intValue: '42' } },
                  { key: 'big', value: { intValue: '9007199254740993' } },
                  { key: 'arr', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }] } } },
                  { key: 'kv', value: { kvlistValue: { values: [{ key: 'k', value: { boolValue: false } }] } } },
                  { key: 'bytes', value: { bytesValue: 'AQI=' } },
                  { key: 'empty', value: {} },
                ],
              },
              {
                traceId: 'ab'.repeat(16),
                spanId: '02'.repeat(8),
                name: 'y',
                startTimeUnixNano: '1',
                endTimeUnixNano: '2',
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  };
  const [a, b] = otlpToSpans(body);
  assert.equal(a.traceId, 'ab'.repeat(16));
  assert.equal(a.parentSpanId, undefined);
  assert.equal(a.endMs - a.startMs, 250);
  assert.equal(a.status, 'timeout');
  assert.equal(a.statusMessage, 'upstream request timeout');
  assert.deepEqual(
    [
      a.attributes.b,
      a.attributes.d,
      a.attributes.i,
      a.attributes.big,
      a.attributes.arr,
      a.attributes.kv,
      a.attributes.bytes,
      a.attributes.empty,
    ],
    [true, 0.5, 42, '9007199254740993', '["a",1]', '{"k":false}', 'AQI=', undefined]
  );
  assert.equal(a.kind, 'client');
  assert.equal(b.status, 'ok');
  assert.equal(b.kind, 'unspecified');
});

test('malformed bodies throw OtlpFormatError naming the path', () => {
  const bad: Array<[unknown, RegExp]> = [
    [null, /\$/],
    [{ foo: 1 }, /no `resourceSpans`/],
    [{ resourceSpans: {} }, /resourceSpans: expected an array/],
    [
      {
        resourceSpans: [
          { scopeSpans: [{ spans: [{ traceId: 'zz', spanId: '01'.repeat(8), name: 'a', startTimeUnixNano: '1' }] }] },
        ],
      },
      /spans\[0\]\.traceId/,
    ],
    [
      {
        resourceSpans: [
          {
            scopeSpans: [
              { spans: [{ traceId: 'ab'.repeat(16), spanId: '01'.repeat(8), name: 'a', startTimeUnixNano: '-5' }] },
            ],
          },
        ],
      },
      /startTimeUnixNano/,
    ],
    [
      {
        batches: [
          {
            scopeSpans: [
              { spans: [{ traceId: 'AAAA+w==', spanId: '01'.repeat(8), name: 'a', startTimeUnixNano: '1' }] },
            ],
          },
        ],
      },
      /decodes to 4 bytes/,
    ],
    [
      {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'ab'.repeat(16),
                    spanId: '01'.repeat(8),
                    name: 'a',
                    startTimeUnixNano: '1',
                    kind: 'WEIRD',
                  },
                ],
              },
            ],
          },
        ],
      },
      /span kind/,
    ],
  ];
  for (const [body, re] of bad) {
    assert.throws(
      () => otlpToSpans(body),
      (e: unknown) => e instanceof OtlpFormatError && re.test(e.message) && e.code === 'bad_otlp'
    );
  }
  assert.deepEqual(otlpToSpans({ trace: {} }), []);
  assert.deepEqual(tempoPartial({ trace: {}, status: 'PARTIAL', message: 'x' }), { partial: true, message: 'x' });
});

test('spansToOtlp → otlpToSpans round-trips a synthetic chain trace, and the RCA answer is the same', async () => {
  const { spansToOtlp } = await import('../../support/otlp-encode');
  const { syntheticTrace, syntheticHealthy } = await import('../../support/rca/synthetic');
  const { rankTrace, buildBaseline } = await import('../../../backend-proxy/src/rca');
  const tr = syntheticTrace({ seed: 3, fault: { hop: 'rag', kind: 'timeout' } });
  const body = JSON.parse(JSON.stringify(spansToOtlp(tr.spans)));
  const back = otlpToSpans(body);
  const key = (s: Span) => s.spanId;
  const sortBy = (xs: Span[]) => [...xs].sort((a, b) => key(a).localeCompare(key(b)));
  const a = sortBy(tr.spans);
  const b = sortBy(back);
  assert.equal(b.length, a.length);
  for (let i = 0; i < a.length; i++) {
    // An error whose message says it timed out (a propagated 504) is read back as a timeout, by design.
    if (!(a[i].status === 'error' && b[i].status === 'timeout' && /timed out|504/.test(a[i].statusMessage ?? '')))
      assert.equal(b[i].status, a[i].status, a[i].name);
    assert.equal(b[i].kind, a[i].kind);
    assert.equal(b[i].parentSpanId, a[i].parentSpanId);
    assert.ok(Math.abs(b[i].startMs - a[i].startMs) < 0.001 && Math.abs(b[i].endMs - a[i].endMs) < 0.001);
    assert.deepEqual(b[i].resource, a[i].resource);
  }
  const baseline = buildBaseline(syntheticHealthy(1, 40));
  const x = rankTrace({ spans: tr.spans, baseline });
  const y = rankTrace({ spans: back, baseline });
  assert.deepEqual(
    y.candidates.map((c) => [c.service, c.pod]),
    x.candidates.map((c) => [c.service, c.pod])
  );
  assert.equal(y.candidates[0].service, 'rag');
});

test('OTLP JSON as the OpenTelemetry JS SDK serialises it (JsonTraceSerializer) normalises with links, kinds, status', async () => {
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
    await import('@opentelemetry/sdk-trace-base');
  const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const api = await import('@opentelemetry/api');
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'rag', 'k8s.pod.name': 'rag-abcde-0' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('t');
  const parent = tracer.startSpan('retrieve', {
    kind: api.SpanKind.SERVER,
    attributes: { 'gen_ai.usage.input_tokens': 700, ratio: 0.25, ok: true, tags: ['a', 'b'] },
  });
  const child = tracer.startSpan(
    'POST /v1/search',
    { kind: api.SpanKind.CLIENT, attributes: { 'error.type': 'timeout' } },
    api.trace.setSpan(api.ROOT_CONTEXT, parent)
  );
  child.setStatus({ code: api.SpanStatusCode.ERROR, message: 'timeout after 1500 ms calling tool' });
  child.end();
  parent.end();
  const body = JSON.parse(
    Buffer.from(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())!).toString('utf8')
  );
  const spans = otlpToSpans(body);
  const p = spans.find((s) => s.name === 'retrieve')!;
  const c = spans.find((s) => s.name === 'POST /v1/search')!;
  assert.equal(c.parentSpanId, p.spanId);
  assert.equal(c.traceId, p.traceId);
  assert.equal(p.traceId, parent.spanContext().traceId);
  assert.equal(p.kind, 'server');
  assert.equal(c.kind, 'client');
  assert.equal(c.status, 'timeout');
  assert.deepEqual(
    [p.attributes['gen_ai.usage.input_tokens'], p.attributes.ratio, p.attributes.ok, p.attributes.tags],
    [700, 0.25, true, '["a","b"]']
  );
  assert.equal(p.resource['k8s.pod.name'], 'rag-abcde-0');
  assert.equal(p.attributes['otel.scope.name'], 't');
  await provider.shutdown();
});

test('kinds as Zipkin and Jaeger conversions write them: missing, SPAN_KIND_UNSPECIFIED, Zipkin names, the span.kind tag', () => {
  const span = (
    i: number,
    kind: unknown,
    attrs: Array<{ key: string; value: unknown }> = []
  ): Record<string, unknown> => ({
    traceId: 'ab'.repeat(16),
    spanId: String(i).padStart(16, '0'),
    name: `s${i}`,
    startTimeUnixNano: '1000000',
    endTimeUnixNano: '2000000',
    ...(kind === undefined ? {} : { kind }),
    attributes: attrs,
  });
  const tag = (v: string): Array<{ key: string; value: unknown }> => [{ key: 'span.kind', value: { stringValue: v } }];
  const spans = otlpToSpans({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] },
        scopeSpans: [
          {
            spans: [
              span(1, undefined),
              span(2, 'SPAN_KIND_UNSPECIFIED'),
              span(3, 0),
              span(4, 'CLIENT'),
              span(5, 'SERVER'),
              span(6, 'PRODUCER'),
              span(7, 'SPAN_KIND_UNSPECIFIED', tag('server')),
              span(8, undefined, tag('client')),
              span(9, 0, tag('consumer')),
              span(10, 'SPAN_KIND_INTERNAL', tag('client')),
              span(11, 'SPAN_KIND_UNSPECIFIED', tag('rpc.client')),
              span(12, '3'),
              span(13, undefined, tag('nonsense')),
            ],
          },
        ],
      },
    ],
  });
  for (const s of spans) Span.parse(s);
  assert.deepEqual(
    spans.map((s) => s.kind),
    [
      'unspecified',
      'unspecified',
      'unspecified',
      'client',
      'server',
      'producer',
      'server',
      'client',
      'consumer',
      'internal',
      'client',
      'client',
      'unspecified',
    ]
  );
  // The tag stays as the producer sent it.
  assert.equal(spans[6].attributes['span.kind'], 'server');
  assert.throws(
    () => otlpToSpans({ resourceSpans: [{ scopeSpans: [{ spans: [span(1, 9)] }] }] }),
    /unknown span kind number 9/
  );
});

test("Zipkin v2 JSON through the Collector's translation (openzipkin/zipkin testdata): services, kinds, peers, shared ids kept", () => {
  const z = JSON.parse(
    readFileSync(join(import.meta.dirname, '../../fixtures/rca/zipkin/yelp.json'), 'utf8')
  ) as ZipkinSpan[];
  const spans = otlpToSpans(zipkinToOtlp(z));
  assert.equal(spans.length, z.length);
  for (const s of spans) Span.parse(s);
  const byName = (n: string): Span => spans.find((s) => s.name === n)!;
  assert.equal(byName('txn: user_get_basic_and_scout_info').kind, 'unspecified');
  assert.equal(byName('commit').kind, 'client');
  assert.equal(byName('commit').attributes['peer.service'], 'mysql');
  assert.equal(byName('post /location/update/v4').service, 'mobile_api');
  assert.equal(
    spans
      .filter((s) => s.spanId === '668ed78ad94b35a1')
      .map((s) => s.kind)
      .sort()
      .join(),
    'client,server'
  );
  assert.equal(spans[0].traceId.length, 32);
  const kindless = otlpToSpans(zipkinToOtlp(withoutKinds(z)));
  assert.ok(kindless.every((s) => s.kind === 'unspecified'));
});
