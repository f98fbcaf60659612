/**
 * Root cause on the real simulated chain (loadgen, in-process, time scale 0.05): healthy requests make the baseline;
 * then for each fault kind at each hop it applies to, the fault is injected through the control API, a few requests
 * are sent on a route that crosses the hop, and each request's trace — exported as OTLP JSON and read back through
 * `otlpToSpans` — is ranked by `rankTrace`. Prints fault × hop → ranks and AC@1/AC@3. No kernel events here (no
 * bpf-exporter in this run): network faults must show through the client→server gap alone.
 * Spans carry `hopscope.fault.*` attributes (ground truth for humans); the engine never reads them.
 */
import { createServer } from 'node:http';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { report } from './lib/ab';
import { startChain } from '../loadgen/src/chain/start';
import { tcpRetransmitAvailable } from '../loadgen/src/chain/faults/tcp-retransmit';
import { otlpToSpans } from '../backend-proxy/src/otlp/normalize';
import { buildBaseline, rankTrace } from '../backend-proxy/src/rca';
import { CHAIN_HOPS, FAULT_KINDS } from '../backend-proxy/src/rca/synthetic';
import type { Span } from '../contract';

const RUNS = Number(process.env.RCA_CHAIN_RUNS ?? 5);
const HEALTHY = Number(process.env.RCA_CHAIN_HEALTHY ?? 24);

// A sink for the chain's own OTLP exporter (we read spans from the in-memory exporter instead).
const sink = createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); }); });
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}/v1/traces`;

const exporter = new InMemorySpanExporter();
const chain = await startChain({
  gatewayPort: 0, controlPort: 0, timeScale: 0.05, logLevel: 'silent', otlpEndpoint: sinkUrl, vectorCacheHitRate: 0,
  samplerAdaptive: false, hopTimeoutMs: 1500, tlsHops: [...CHAIN_HOPS], spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const retransmitOk = await tcpRetransmitAvailable();

type Route = { route: 'rag' | 'agent'; backend: 'vllm' | 'tgi' };
const routeFor = (hop: string, i: number): Route => {
  const backend = hop === 'llm-tgi' ? 'tgi' : hop === 'llm-vllm' ? 'vllm' : i % 2 ? 'tgi' : 'vllm';
  if (hop === 'agent' || hop === 'tool') return { route: 'agent', backend };
  if (['embedding', 'vector-cache', 'rag'].includes(hop)) return { route: 'rag', backend };
  return { route: i % 2 ? 'agent' : 'rag', backend };
};

/** One request; returns its trace as contract spans (through OTLP JSON and the normaliser). */
async function request(r: Route, i: number): Promise<Span[]> {
  exporter.reset();
  const t0 = Date.now();
  await fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hopscope-route': r.route, 'x-hopscope-backend': r.backend },
    body: JSON.stringify({ messages: [{ role: 'user', content: `question ${i}: what changed in the release ${i % 7}?` }], max_tokens: 16 }),
  }).then((x) => x.arrayBuffer()).catch(() => undefined);
  await chain.forceFlush();
  // Server spans of a hung callee end a little after the caller gave up.
  await new Promise((res) => setTimeout(res, 300));
  await chain.forceFlush();
  const body = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())!).toString('utf8'));
  const spans = otlpToSpans(body);
  // Spans of the previous request can still be arriving: this request's root started after we sent it.
  const root = spans.find((s) => s.service === 'gateway' && !s.parentSpanId && s.startMs >= t0 - 1);
  return root ? spans.filter((s) => s.traceId === root.traceId) : [];
}

const healthy: Span[][] = [];
for (let i = 0; i < HEALTHY; i++) healthy.push(await request(routeFor(i % 4 < 2 ? 'rag' : 'agent', i), i));
const baseline = buildBaseline(healthy);

const rows: Array<Record<string, string | number>> = [];
let at1 = 0;
let at3 = 0;
let total = 0;
const skipped: string[] = [];
let dumped = false;
const misses: string[] = [];
const KINDS = process.env.RCA_CHAIN_KINDS ? FAULT_KINDS.filter((k) => process.env.RCA_CHAIN_KINDS!.split(',').includes(k)) : FAULT_KINDS;
for (const kind of KINDS) {
  const row: Record<string, string | number> = { fault: kind };
  for (const hop of CHAIN_HOPS) {
    if (kind === 'tcp_retransmit' && retransmitOk !== true) { row[hop] = 'n/a'; continue; }
    // The driver reaches the gateway over plain HTTP here: a gateway TLS fault has nothing to slow down.
    if (kind === 'tls_slow_handshake' && hop === 'gateway') { row[hop] = 'n/a'; continue; }
    const r = await fetch(`${chain.controlUrl}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: hop, kind, durationS: 600 }) });
    const f = (await r.json()) as { id?: string; error?: { message: string } };
    if (!r.ok || !f.id) { row[hop] = '-'; skipped.push(`${kind}@${hop}: ${f.error?.message ?? r.status}`); continue; }
    const ranks: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const spans = await request(routeFor(hop, i), 1000 + i);
      if (!spans.length) { misses.push(`${kind}@${hop}: no trace collected`); ranks.push(99); continue; }
      const a = rankTrace({ spans, baseline });
      const services = [...new Set(a.candidates.map((c) => c.service))];
      const rank = services.indexOf(hop) + 1 || 99;
      ranks.push(rank);
      if (rank !== 1) {
        misses.push(`${kind}@${hop}: top ${a.candidates.slice(0, 2).map((c) => `${c.service}=${c.score}`).join(', ')}`);
        if (process.env.RCA_CHAIN_DUMP && !dumped) {
          dumped = true;
          (await import('node:fs')).writeFileSync(process.env.RCA_CHAIN_DUMP, JSON.stringify({ spans, healthy }));
        }
        if (process.env.RCA_CHAIN_VERBOSE) misses.push(`    ${spans.map((s) => `${s.service}:${s.kind}:${s.name}:${(s.endMs - s.startMs).toFixed(1)}:${s.status}`).join(' | ')}`);
      }
    }
    await fetch(`${chain.controlUrl}/faults/${f.id}`, { method: 'DELETE' });
    at1 += ranks.filter((x) => x === 1).length;
    at3 += ranks.filter((x) => x <= 3).length;
    total += ranks.length;
    row[hop] = ranks.join(',');
  }
  rows.push(row);
}
report(`Our chain (real, in-process): fault × hop → rank of the faulted hop per request (${RUNS} requests each)`, rows, { rows, at1, at3, total, skipped, misses });
console.log(`real chain: AC@1 ${((100 * at1) / Math.max(1, total)).toFixed(1)}% (${at1}/${total}), AC@3 ${((100 * at3) / Math.max(1, total)).toFixed(1)}%`);
if (retransmitOk !== true) console.log(`tcp_retransmit not injected: ${retransmitOk}`);
if (skipped.length) console.log(`not applicable: ${skipped.join('; ')}`);
if (misses.length) console.log(`misses:\n  ${misses.slice(0, 40).join('\n  ')}`);
await chain.stop();
sink.close();
