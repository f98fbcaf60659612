import { createServer } from 'node:http';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { startChain } from '/work/main/loadgen/src/chain/start';
import { otlpToSpans } from '/work/main/backend-proxy/src/otlp/normalize';
import { buildBaseline, rankTrace } from '/work/main/backend-proxy/src/rca';
const sink = createServer((req, res) => { req.resume(); req.on('end', () => { res.end('{}'); }); });
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const exporter = new InMemorySpanExporter();
const chain = await startChain({ gatewayPort: 0, controlPort: 0, timeScale: 0.05, logLevel: 'silent', otlpEndpoint: `http://127.0.0.1:${(sink.address() as any).port}/v1/traces`, vectorCacheHitRate: 0, samplerAdaptive: false, hopTimeoutMs: 1500, tlsHops: ['tool'], spanProcessors: [new SimpleSpanProcessor(exporter)] });
async function request(route: string, i: number) {
  exporter.reset();
  const t0 = Date.now();
  const r = await fetch(`${chain.gatewayUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hopscope-route': route, 'x-hopscope-backend': 'vllm' }, body: JSON.stringify({ messages: [{ role: 'user', content: `question ${i}` }], max_tokens: 16 }) });
  await r.arrayBuffer();
  await chain.forceFlush();
  const spans = otlpToSpans(JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())!).toString()));
  return { spans, ms: Date.now() - t0, status: r.status };
}
const healthy = [];
for (let i = 0; i < 10; i++) { const x = await request('rag', i); healthy.push(x.spans); if (i < 2) console.log('healthy ms', x.ms, x.status, x.spans.map(s => `${s.service}:${s.kind}:${s.name}:${(s.endMs - s.startMs).toFixed(1)}${s.parentSpanId ? '' : ':ROOT'}`).join(' | ')); }
const baseline = buildBaseline(healthy);
const f = await (await fetch(`${chain.controlUrl}/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'embedding', kind: 'latency' }) })).json();
console.log('fault', f);
const x = await request('rag', 99);
console.log('faulted ms', x.ms, x.spans.map(s => `${s.service}:${s.kind}:${s.name}:${(s.endMs - s.startMs).toFixed(1)}`).join(' | '));
const a = rankTrace({ spans: x.spans, baseline });
console.log(JSON.stringify(a.candidates.slice(0, 3).map(c => [c.service, c.score, c.evidence.map(e => e.summary)]), null, 1));
console.log(a.criticalPath.map((p: any) => `${p.service}:${p.operation}:${p.selfMs}/${p.baselineSelfMs}`).join('\n'));
await chain.stop(); sink.close();
