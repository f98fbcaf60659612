import { readFileSync } from 'node:fs';
import { buildBaseline, rankTrace } from '../backend-proxy/src/rca';
const { spans, healthy } = JSON.parse(readFileSync('/tmp/miss.json', 'utf8'));
const baseline = buildBaseline(healthy);
const a = rankTrace({ spans, baseline });
console.log((a as any).anchor, a.candidates.slice(0, 3).map((c) => [c.service, c.score, c.evidence.map((e) => e.summary)]));
console.log(a.criticalPath.map((p: any) => `${p.service}:${p.kind}:${p.operation}:self=${p.selfMs}/${p.baselineSelfMs}:on=${p.onPathMs}`).join('\n'));
console.log(spans.map((s: any) => `${s.spanId}<${s.parentSpanId}:${s.service}:${s.kind}:${s.name}:${s.startMs.toFixed(1)}-${s.endMs.toFixed(1)}`).join('\n'));
