/**
 * The proxy's own OpenTelemetry (the http, express and undici instrumentations), configured by the standard OTEL_*
 * variables: a request that arrives with a W3C `traceparent` (as Grafana's data proxy sends one) is continued by the
 * proxy's spans (SERVER span named by its route → the route handler's span → a span per source call → a CLIENT span
 * per HTTP attempt), exported over OTLP/HTTP (protobuf, the default) to a second proxy's embedded store (a real OTLP
 * receiver), with the service name and resource attributes from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES; and
 * the proxy's calls to a real Prometheus carry a `traceparent` of the same trace whose parent is the CLIENT span of
 * that call (seen by a recording relay in front of Prometheus). A POST with a body keeps its context across the body
 * parser. Tracing starts after the proxy's modules were imported (as in this file), as main.ts may not guarantee.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { TraceDetail } from '../../../contract';
import { startProxy, type RunningProxy } from '../../../backend-proxy/src/server';
import { selfTracingFromEnv, startSelfTracing } from '../../../backend-proxy/src/telemetry';
import { chainTrace, otlp, tinyServer } from '../../support/otlp-spans';
import { startProxyProcess } from '../reliability/support/proxy-process';
import { startPrometheus, type RealServer } from '../../support/real-servers';

const TRACE = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const PARENT = '00f067aa0ba902b7';
const POST_TRACE = 'b1b2c3d4e5f60718293a4b5c6d7e8f91';
const UNTRACED = ['c1b2c3d4e5f60718293a4b5c6d7e8f92', 'd1b2c3d4e5f60718293a4b5c6d7e8f93'];

describe("the proxy's own traces join the caller's", () => {
  let prom: RealServer;
  let relay: Awaited<ReturnType<typeof tinyServer>>;
  let receiver: RunningProxy;
  let proxy: RunningProxy;
  let stopTracing: () => Promise<void>;
  const seenByPrometheus: string[] = [];

  before(async () => {
    prom = await startPrometheus([]);
    const target = new URL(prom.url);
    relay = await tinyServer((req, res, body) => {
      if (req.headers.traceparent) seenByPrometheus.push(String(req.headers.traceparent));
      const up = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
        },
        (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        }
      );
      up.end(body);
    });
    receiver = await startProxy({ port: 0, prometheusUrl: undefined, exporterUrls: [], chainControlUrl: undefined });
    stopTracing = startSelfTracing(
      selfTracingFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'hopscope-proxy-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=proxy-0,deployment.environment=test%20env',
      })
    );
    proxy = await startProxy({ port: 0, prometheusUrl: relay.url, exporterUrls: [], chainControlUrl: undefined });
  });

  after(async () => {
    await proxy?.close();
    await receiver?.close();
    await relay?.close();
    await prom?.stop();
  });

  it('an incoming traceparent parents the server span, its source calls, and Prometheus sees the trace', async () => {
    const r = await fetch(`${proxy.url}/api/golden?backend=vllm&from=now-5m&to=now`, {
      headers: { traceparent: `00-${TRACE}-${PARENT}-01` },
    });
    assert.equal(r.status, 200);
    await r.json();
    // Many socket chunks: the body parser's callbacks still run in the request's context.
    const body = JSON.stringify({
      traces: otlp(Array.from({ length: 500 }, (_, i) => chainTrace(i, Date.now() - 10_000, 200)).flat()),
    });
    const p = await fetch(`${proxy.url}/api/rca`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${POST_TRACE}-${PARENT}-01` },
      body,
    });
    assert.equal(p.status, 200);
    await p.json();
    // No spans for /metrics (scrapes) and for OTLP ingest (an exporter pointed at the proxy itself would feed itself).
    await (await fetch(`${proxy.url}/metrics`, { headers: { traceparent: `00-${UNTRACED[0]}-${PARENT}-01` } })).text();
    const ingest = await fetch(`${proxy.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${UNTRACED[1]}-${PARENT}-01` },
      body: JSON.stringify(otlp(chainTrace(2, Date.now() - 5000, 100))),
    });
    assert.equal(ingest.status, 200);
    await stopTracing(); // flushes the batch to the receiver
    for (const id of UNTRACED)
      assert.equal((await fetch(`${receiver.url}/api/traces/${id}`)).status, 404, `no span of trace ${id}`);

    const got = TraceDetail.parse(await (await fetch(`${receiver.url}/api/traces/${TRACE}`)).json());
    const all = got.spans.map((s) => `${s.kind} ${s.name}`).join(', ');
    // (The relay in front of Prometheus is an HTTP server of this process too: its server span is in the trace.)
    const server = got.spans.find((s) => s.kind === 'server' && s.name.startsWith('GET /api'));
    assert.ok(server, all);
    assert.equal(server.name, 'GET /api/golden');
    assert.equal(server.parentSpanId, PARENT, "the caller's span is the parent");
    assert.equal(server.attributes['http.route'], '/api/golden');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['http.request.method'], 'GET');
    assert.equal(server.service, 'hopscope-proxy-under-test');
    assert.equal(server.resource['k8s.pod.name'], 'proxy-0');
    assert.equal(server.resource['deployment.environment'], 'test env');
    const handler = got.spans.find((s) => s.name === 'request handler - /api/golden');
    assert.ok(handler, all);
    assert.equal(handler.parentSpanId, server.spanId);
    const calls = got.spans.filter((s) => s.name === 'prometheus GET');
    // The six vLLM golden queries, and the KV-cache hit rate once more under vLLM's older names (this Prometheus holds
    // no vLLM series, so the current names found nothing).
    assert.equal(calls.length, 7, 'the six vLLM golden queries and the old-name fallback');
    assert.ok(calls.every((c) => c.parentSpanId === handler.spanId));
    // One CLIENT span per HTTP attempt of each call (no retries here), by the undici instrumentation.
    const attempts = got.spans.filter((s) => s.kind === 'client');
    assert.equal(attempts.length, 7, all);
    assert.ok(
      attempts.every(
        (a) => a.attributes['hopscope.source'] === 'prometheus' && a.attributes['http.request.method'] === 'GET'
      )
    );
    assert.deepEqual(new Set(attempts.map((a) => a.parentSpanId)), new Set(calls.map((c) => c.spanId)));
    // Prometheus received the trace: each call's traceparent names this trace, and the attempt's span as parent.
    const mine = seenByPrometheus.filter((h) => h.split('-')[1] === TRACE);
    assert.equal(mine.length, 7, seenByPrometheus.join('\n'));
    assert.deepEqual(new Set(mine.map((h) => h.split('-')[2])), new Set(attempts.map((c) => c.spanId)));

    const posted = TraceDetail.parse(await (await fetch(`${receiver.url}/api/traces/${POST_TRACE}`)).json());
    const names = posted.spans.map((s) => s.name).sort();
    assert.deepEqual(
      names,
      ['POST /api/rca', 'rca window', 'request handler - /api/rca'],
      "the engine's span runs in the request's context after the body was read"
    );
    const postHandler = posted.spans.find((s) => s.name === 'request handler - /api/rca')!;
    assert.equal(posted.spans.find((s) => s.name === 'rca window')!.parentSpanId, postHandler.spanId);
    assert.equal(postHandler.parentSpanId, posted.spans.find((s) => s.kind === 'server')!.spanId);
  });
});

describe('the CLI traces itself when OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
  it("a request with a traceparent is a SERVER span of the proxy's trace, named by its route, exported on shutdown", async () => {
    const receiver = await startProxy({
      port: 0,
      prometheusUrl: undefined,
      exporterUrls: [],
      chainControlUrl: undefined,
    });
    const cli = await startProxyProcess({
      HOPSCOPE_PROMETHEUS_URL: 'none',
      HOPSCOPE_EXPORTER_URLS: 'none',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'hopscope-proxy-cli',
    });
    try {
      const trace = 'e1b2c3d4e5f60718293a4b5c6d7e8f94';
      const r = await fetch(`${cli.url}/api/traces?from=now-5m&to=now`, {
        headers: { traceparent: `00-${trace}-${PARENT}-01` },
      });
      assert.equal(r.status, 200);
      await r.json();
      await cli.stop(); // SIGTERM: the proxy closes, then its spans are flushed
      assert.equal(cli.exited()?.code, 0, cli.output());
      const got = TraceDetail.parse(await (await fetch(`${receiver.url}/api/traces/${trace}`)).json());
      const server = got.spans.find((s) => s.kind === 'server');
      assert.ok(server, got.spans.map((s) => s.name).join(', '));
      assert.equal(server.name, 'GET /api/traces');
      assert.equal(server.parentSpanId, PARENT);
      assert.equal(server.service, 'hopscope-proxy-cli');
    } finally {
      await cli.stop();
      await receiver.close();
    }
  });
});
