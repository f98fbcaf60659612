/**
 * Per-trace root cause through the proxy (GET /api/traces/:id/rca: trace from the embedded store, baseline from the
 * store, 10,000 kernel events fetched from a bpf-exporter over HTTP) vs the pure engine alone on the same inputs,
 * side by side, at 500 / 5,000 / 50,000 spans. A (every row) builds the full baseline from the healthy spans and
 * ranks, every time.
 * - "first click (cold)": B is the FIRST GET /rca of a fresh proxy, right after the 6 traces were posted (a new proxy
 *   per round, set up untimed): nothing cached by a previous click, only what the proxy does by itself on ingest.
 * - "warm click": B reuses the proxy's cached baseline (10 s; what a user clicking through slow traces gets after the
 *   first click), so B shows the proxy's I/O (trace from the store, 10,000 events over HTTP) plus the engine's ranking.
 * - "store baseline, not warmed": the store alone, the worst case of a click landing before the store's idle-time
 *   warm-up ran: A = spans out of the store + `buildBaseline` (what a first click did before), B = `store.baselineStats`
 *   computing every trace's samples on demand (warm-up disabled).
 * The exporter stub serialises its 10,000 events per request in this process (so its cost lands on the proxy's
 * thread as well, as it did before).
 * Usage: tsx bench/proxy-rca.bench.ts   (HOPSCOPE_BENCH_SIZES="500,5000,50000")
 */
import { request } from 'undici';
import type { KernelEvent, Span } from '../contract';
import { abCompare, abRow, report, smoke, SMOKE } from './lib/ab';
import { startProxy } from '../backend-proxy/src/server';
import { buildBaseline, rankTrace } from '../backend-proxy/src/rca';
import { TraceStore } from '../backend-proxy/src/store/trace-store';
import { enrichSpan } from '../backend-proxy/src/store/enrich';
import { hex, otlp, tinyServer, type SpanSpec } from '../tests/support/otlp-spans';
import { otlpToSpans } from '../backend-proxy/src/otlp/normalize';

const SIZES = (process.env.HOPSCOPE_BENCH_SIZES ?? smoke('500,5000,50000', '500')).split(',').map(Number);
const SERVICES = ['gateway', 'embedding', 'vector-cache', 'rag', 'llm-vllm', 'agent', 'tool'];

/** A wide trace: a root and `n-1` spans in a fan of chains, one hop made slow. */
function bigTrace(id: number, n: number, t0: number, slow: boolean): SpanSpec[] {
  const traceId = hex(id, 32);
  const out: SpanSpec[] = [
    {
      traceId,
      spanId: hex(id * 1_000_000, 16),
      name: 'POST /v1/chat',
      service: 'gateway',
      pod: 'gateway-0',
      startMs: t0,
      durMs: n * 0.1 + 50,
    },
  ];
  for (let i = 1; i < n; i++) {
    const svc = SERVICES[i % SERVICES.length];
    const parent = i < 8 ? out[0].spanId : hex(id * 1_000_000 + i - 7, 16);
    const dur = slow && svc === 'rag' && i % 50 === 3 ? 30 : 1;
    out.push({
      traceId,
      spanId: hex(id * 1_000_000 + i, 16),
      parentSpanId: parent,
      name: `${svc} op`,
      service: svc,
      pod: `${svc}-0`,
      startMs: t0 + (i % 97) * 0.05,
      durMs: dur,
    });
  }
  return out;
}

const rows: Array<Record<string, string | number>> = [];
const storeRows: Array<Record<string, string | number>> = [];
const json: unknown[] = [];
const now = Date.now();
const events: KernelEvent[] = Array.from({ length: 10_000 }, (_, i) => ({
  ts: now - 60_000 + i * 5,
  type: i % 3 ? 'tcp_retransmit' : 'tls_handshake',
  pid: 100 + (i % 7),
  comm: 'x',
  pod: `${SERVICES[i % SERVICES.length]}-0`,
  durationMs: i % 3 ? undefined : 2,
  detail: {},
  mode: 'replay',
}));
const exporter = await tinyServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ events }));
});
const post = async (url: string, body: unknown): Promise<void> => {
  const r = await request(`${url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`ingest failed: ${r.statusCode} ${text.slice(0, 300)}`);
};
try {
  for (const n of SIZES) {
    const opts = {
      port: 0,
      prometheusUrl: undefined,
      chainControlUrl: undefined,
      exporterUrls: [exporter.url],
      logLevel: 'silent' as const,
      alertIntervalMs: 0,
      storeMaxSpans: 10 * n + 100_000,
      storeMaxBytes: 4 * 1024 ** 3,
      bodyLimitBytes: 512 * 1024 * 1024,
    };
    // 5 healthy traces as the baseline, then the slow one.
    const healthyBodies = Array.from({ length: 5 }, (_, k) => otlp(bigTrace(k + 1, n, now - 50_000 + k * 1000, false)));
    const slowBody = otlp(bigTrace(99, n, now - 30_000, true));
    const ingest = async (url: string): Promise<void> => {
      for (const b of healthyBodies) await post(url, b);
      await post(url, slowBody);
    };
    const spans: Span[] = otlpToSpans(slowBody);
    const baseSpans: Span[] = healthyBodies.flatMap((b) => otlpToSpans(b));
    const engine = async (): Promise<number> => {
      const t0 = performance.now();
      rankTrace({ spans, baseline: buildBaseline(baseSpans), kernelEvents: events });
      return performance.now() - t0;
    };
    const click = async (url: string): Promise<number> => {
      const t0 = performance.now();
      const r = await request(`${url}/api/traces/${hex(99, 32)}/rca`);
      const body = (await r.body.json()) as { candidates: Array<{ service: string }>; missing: string[] };
      if (r.statusCode !== 200 || !body.candidates.length)
        throw new Error(`rca failed: ${JSON.stringify(body).slice(0, 200)}`);
      if (body.missing.some((m) => m.startsWith('baseline')))
        throw new Error(`rca without baseline: ${body.missing.join('; ')}`);
      return performance.now() - t0;
    };
    // First click: a fresh proxy per round, set up untimed.
    const firstClick = async (): Promise<number> => {
      const proxy = await startProxy(opts);
      try {
        await ingest(proxy.url);
        return await click(proxy.url);
      } finally {
        await proxy.close();
      }
    };
    if (!SMOKE) {
      // Warm-up (a smoke run, bench/lib/ab.ts, whose figures are not read, needs none).
      await engine();
      await firstClick();
    }
    const cold = await abCompare({
      name: `${n} spans: first click (cold)`,
      unit: 'ms',
      a: { label: 'engine alone (baseline built)', run: engine },
      b: { label: 'GET /api/traces/:id/rca', run: firstClick },
      rounds: 5,
    });
    rows.push(abRow(cold));
    json.push(cold);

    const proxy = await startProxy(opts);
    try {
      await ingest(proxy.url);
      await click(proxy.url);
      const warm = await abCompare({
        name: `${n} spans: warm click`,
        unit: 'ms',
        a: { label: 'engine alone (baseline built)', run: engine },
        b: { label: 'GET /api/traces/:id/rca', run: () => click(proxy.url) },
        rounds: 5,
      });
      rows.push(abRow(warm));
      json.push(warm);
    } finally {
      await proxy.close();
    }

    // The store alone, worst case: no idle-time warm-up has run before the click.
    const keys = [
      ...new Map(spans.map((s) => [`${s.service}\u0000${s.name}`, { service: s.service, name: s.name }])).values(),
    ];
    const freshStore = (): TraceStore => {
      const st = new TraceStore({ maxSpans: 10 * n + 100_000, maxBytes: 4 * 1024 ** 3, maxAgeMs: 3600_000 }, Date.now, {
        enabled: false,
        sliceMs: 0,
        quietMs: 0,
      });
      for (const b of [...healthyBodies, slowBody]) {
        const sp = otlpToSpans(b);
        for (const x of sp) enrichSpan(x);
        st.add(sp);
      }
      return st;
    };
    const before = async (): Promise<number> => {
      const st = freshStore();
      const t0 = performance.now();
      buildBaseline(st.baseline(keys, 200, hex(99, 32), now - 30_000));
      return performance.now() - t0;
    };
    const after = async (): Promise<number> => {
      const st = freshStore();
      const t0 = performance.now();
      st.baselineStats(keys, 200, hex(99, 32), now - 30_000);
      return performance.now() - t0;
    };
    const st = await abCompare({
      name: `${n} spans: store baseline, not warmed`,
      unit: 'ms',
      a: { label: 'spans + buildBaseline', run: before },
      b: { label: 'store.baselineStats on demand', run: after },
      rounds: 5,
    });
    storeRows.push(abRow(st));
    json.push(st);
  }
} finally {
  await exporter.close();
}
report(
  'Per-trace root cause through the proxy vs the engine alone',
  rows,
  json.filter((_, i) => i % 3 !== 2)
);
report(
  'The RCA baseline out of the store when no warm-up ran before the click',
  storeRows,
  json.filter((_, i) => i % 3 === 2)
);
