/**
 * Per-trace root cause through the proxy (GET /api/traces/:id/rca: trace from the embedded store, baseline from the
 * store, 10,000 kernel events fetched from a bpf-exporter over HTTP) vs the pure engine alone on the same inputs,
 * side by side, at 500 / 5,000 / 50,000 spans. A builds the baseline every time; B reuses the proxy's built baseline
 * for 10 s (what a user clicking through slow traces gets after the first click), so B shows the proxy's I/O
 * (trace from the store, 10,000 events over HTTP) plus the engine's ranking.
 * Usage: tsx bench/proxy-rca.bench.ts   (HOPSCOPE_BENCH_SIZES="500,5000,50000")
 */
import { request } from 'undici';
import type { KernelEvent, Span } from '../contract';
import { abCompare, abRow, report } from './lib/ab';
import { startProxy } from '../backend-proxy/src/server';
import { buildBaseline, rankTrace } from '../backend-proxy/src/rca';
import { hex, otlp, tinyServer, type SpanSpec } from '../tests/unit/proxy/helpers';
import { otlpToSpans } from '../backend-proxy/src/otlp/normalize';

const SIZES = (process.env.HOPSCOPE_BENCH_SIZES ?? '500,5000,50000').split(',').map(Number);
const SERVICES = ['gateway', 'embedding', 'vector-cache', 'rag', 'llm-vllm', 'agent', 'tool'];

/** A wide trace: a root and `n-1` spans in a fan of chains, one hop made slow. */
function bigTrace(id: number, n: number, t0: number, slow: boolean): SpanSpec[] {
  const traceId = hex(id, 32);
  const out: SpanSpec[] = [{ traceId, spanId: hex(id * 1_000_000, 16), name: 'POST /v1/chat', service: 'gateway', pod: 'gateway-0', startMs: t0, durMs: n * 0.1 + 50 }];
  for (let i = 1; i < n; i++) {
    const svc = SERVICES[i % SERVICES.length];
    const parent = i < 8 ? out[0].spanId : hex(id * 1_000_000 + i - 7, 16);
    const dur = slow && svc === 'rag' && i % 50 === 3 ? 30 : 1;
    out.push({ traceId, spanId: hex(id * 1_000_000 + i, 16), parentSpanId: parent, name: `${svc} op`, service: svc, pod: `${svc}-0`, startMs: t0 + (i % 97) * 0.05, durMs: dur });
  }
  return out;
}

const rows = [];
const json = [];
const now = Date.now();
const events: KernelEvent[] = Array.from({ length: 10_000 }, (_, i) => ({
  ts: now - 60_000 + i * 5, type: i % 3 ? 'tcp_retransmit' : 'tls_handshake', pid: 100 + (i % 7), comm: 'x', pod: `${SERVICES[i % SERVICES.length]}-0`, durationMs: i % 3 ? undefined : 2, detail: {}, mode: 'replay',
}));
const exporter = await tinyServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ events })); });
try {
  for (const n of SIZES) {
    const proxy = await startProxy({ port: 0, prometheusUrl: undefined, chainControlUrl: undefined, exporterUrls: [exporter.url], logLevel: 'silent', alertIntervalMs: 0, storeMaxSpans: 10 * n + 100_000, storeMaxBytes: 4 * 1024 ** 3, bodyLimitBytes: 512 * 1024 * 1024 });
    try {
      // 5 healthy traces as the baseline, then the slow one.
      for (let k = 0; k < 5; k++) await request(`${proxy.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(otlp(bigTrace(k + 1, n, now - 50_000 + k * 1000, false))) }).then((r) => r.body.text());
      const slowBody = otlp(bigTrace(99, n, now - 30_000, true));
      const posted = await request(`${proxy.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(slowBody) });
      const postedText = await posted.body.text();
      if (posted.statusCode !== 200) throw new Error(`ingest failed: ${posted.statusCode} ${postedText.slice(0, 300)}`);
      const spans: Span[] = otlpToSpans(slowBody);
      const baseSpans: Span[] = [];
      for (let k = 0; k < 5; k++) baseSpans.push(...otlpToSpans(otlp(bigTrace(k + 1, n, now - 50_000 + k * 1000, false))));
      const engine = async (): Promise<number> => {
        const t0 = performance.now();
        rankTrace({ spans, baseline: buildBaseline(baseSpans), kernelEvents: events });
        return performance.now() - t0;
      };
      const viaProxy = async (): Promise<number> => {
        const t0 = performance.now();
        const r = await request(`${proxy.url}/api/traces/${hex(99, 32)}/rca`);
        const body = await r.body.json() as { candidates: Array<{ service: string }> };
        if (r.statusCode !== 200 || !body.candidates.length) throw new Error(`rca failed: ${JSON.stringify(body).slice(0, 200)}`);
        return performance.now() - t0;
      };
      await engine(); await viaProxy();
      const res = await abCompare({ name: `${n} spans, 10000 kernel events`, unit: 'ms', a: { label: 'engine alone (baseline built)', run: engine }, b: { label: 'GET /api/traces/:id/rca', run: viaProxy }, rounds: 5 });
      rows.push(abRow(res));
      json.push(res);
    } finally {
      await proxy.close();
    }
  }
} finally {
  await exporter.close();
}
report('Per-trace root cause through the proxy vs the engine alone', rows, json);
