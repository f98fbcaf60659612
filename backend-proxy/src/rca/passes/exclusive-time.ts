/**
 * Exclusive time and gap: every span's window minus the union of its synchronous children, and for a client
 * span the client→server gap (its duration minus its server child's); the critical path as the answer shows it.
 */
import { type CriticalPathItem, podOrServiceOfSpan } from '../../../../contract';
import type { TraceAccount } from '../account';
import { round } from '../format';
import { exclusiveTimes } from '../tree';

export function exclusiveTime(a: TraceAccount): void {
  const { spans, tree: t, anchor, onPathMs } = a;
  exclusiveTimes(t);
  const depth = new Int32Array(spans.length);
  for (const i of a.path) {
    const s = spans[i];
    depth[i] = i === anchor ? 0 : depth[t.parent[i]] + 1;
    // One literal, optional fields added after: a spread inside a literal takes V8's slow path (5,000 items).
    const item: CriticalPathItem = {
      spanId: s.spanId,
      depth: depth[i],
      service: s.service,
      pod: podOrServiceOfSpan(s),
      operation: s.name,
      kind: s.kind,
      status: s.status,
      startMs: s.startMs,
      endMs: s.endMs,
      durationMs: round(s.endMs - s.startMs),
      selfMs: round(t.self[i]),
      onPathMs: round(onPathMs[i]),
    };
    if (s.parentSpanId !== undefined) item.parentSpanId = s.parentSpanId;
    if (!Number.isNaN(t.gap[i])) item.gapMs = round(t.gap[i]);
    if (t.skewMs[i] !== 0) item.skewCorrectedMs = round(t.skewMs[i]);
    a.criticalPath.push(item);
  }
}
