/** The proxy's own spans (source calls, root-cause runs) and hopscope_proxy_* metrics. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { chainTrace, hex, otlp, tinyServer } from '../../support/otlp-spans';

const exporter = new InMemorySpanExporter();
let proxy: RunningProxy;
let prom: Awaited<ReturnType<typeof tinyServer>>;

before(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  prom = await tinyServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"success","data":{"resultType":"matrix","result":[]}}');
  });
  proxy = await startProxy({ port: 0, prometheusUrl: prom.url, exporterUrls: [], chainControlUrl: undefined });
  const spans = [];
  for (let i = 0; i < 10; i++) spans.push(...chainTrace(i, Date.now() - 60_000 + i * 1000, i === 5 ? 900 : 100));
  await fetch(`${proxy.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlp(spans)),
  });
});
after(async () => {
  await proxy.close();
  await prom.close();
  trace.disable();
});

test('a span around every source call and every root-cause run', async () => {
  await (await fetch(`${proxy.url}/api/golden?backend=tgi`)).json();
  await (await fetch(`${proxy.url}/api/traces/${hex(6, 32)}/rca`)).json();
  const names = exporter.getFinishedSpans().map((s) => s.name);
  assert.equal(names.filter((n) => n === 'prometheus GET').length, 5); // the five TGI golden queries
  assert.ok(names.includes('rca trace'));
  const rca = exporter.getFinishedSpans().find((s) => s.name === 'rca trace')!;
  assert.equal(rca.attributes['hopscope.spans'], 3);
});

test('hopscope_proxy_* metrics count requests, source calls and RCA runs', async () => {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  assert.match(text, /hopscope_proxy_http_requests_total\{method="GET",route="\/api\/golden",status="200"\} \d+/);
  assert.match(text, /hopscope_proxy_source_calls_total\{source="prometheus",outcome="ok"\} \d+/);
  assert.match(text, /hopscope_proxy_rca_duration_seconds_count\{kind="trace"\} [1-9]/);
});
