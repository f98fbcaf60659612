/**
 * Broken propagation: orphans (parent not in the trace), several parentless roots, the trace's root missing,
 * a client span with no server span where healthy traffic had one, and an edge that skips a hop of `expectedEdges`.
 */
import { isFailedSpan, peerOfClientSpan } from '../../../../contract';
import { type HopAccount, type TraceAccount, calleeOf, hopAt, hopOfSpan, opAt } from '../account';
import { fmtMs } from '../format';

export function propagation(a: TraceAccount): void {
  const { spans, tree: t, config: c, missing } = a;
  const n = spans.length;
  const broken = (h: HopAccount, summary: string, spanId: string): void => {
    h.propagationBreaks++;
    h.evidence.push({ kind: 'broken_propagation', summary, spanId });
  };
  for (const o of t.orphans) {
    const s = spans[o];
    missing.push(
      `span ${s.parentSpanId} (parent of ${s.service} "${s.name}"): dropped, or context propagation broke before ${s.service}`
    );
    broken(
      hopOfSpan(a, o),
      `${s.service} "${s.name}" names parent ${s.parentSpanId}, which is not in the trace: context propagation broke or a span was dropped`,
      s.spanId
    );
  }
  const parentless = t.roots.filter((r) => spans[r].parentSpanId === undefined);
  if (parentless.length > 1) {
    missing.push(
      `a single root: ${parentless.length} spans start the trace (${parentless
        .slice(0, 3)
        .map((r) => `${spans[r].service} "${spans[r].name}"`)
        .join(', ')}): a hop restarted the trace context`
    );
  }
  if (spans[a.root].parentSpanId !== undefined)
    missing.push(`the trace's root span (the earliest span names parent ${spans[a.root].parentSpanId})`);
  for (let i = 0; i < n; i++) {
    const s = spans[i];
    if (s.kind !== 'client' || t.serverChild[i] >= 0 || t.async[i]) continue;
    const b = opAt(a, i);
    // Calls to uninstrumented dependencies (databases…) never had a server span: only flag what healthy traffic had.
    if (b && !b.gap) continue;
    const named = peerOfClientSpan(s);
    if (!b && named === undefined && !isFailedSpan(s)) continue;
    const peer = named ?? 'its server';
    if (s.status === 'timeout') {
      // A hung callee may simply not have reported yet: say so, without calling it broken propagation.
      missing.push(
        `server span for ${s.service}'s call "${s.name}" to ${peer} (the call timed out; a hung callee may never report its span)`
      );
      continue;
    }
    missing.push(`server span for ${s.service}'s call "${s.name}" to ${peer}`);
    broken(
      calleeOf(a, i),
      `${s.service} called ${peer} ("${s.name}", ${fmtMs(s.endMs - s.startMs)}) but no server span joined the trace: uninstrumented hop or lost traceparent`,
      s.spanId
    );
  }
  if (c.expectedEdges.length) skippedHops(a);
}

/** a → b observed where the topology routes a → x → b: x is uninstrumented or dropped the context. */
function skippedHops(a: TraceAccount): void {
  const { spans, tree: t, config: c } = a;
  const edges = new Set(c.expectedEdges.map(([x, y]) => `${x}\u001f${y}`));
  const via = new Map<string, string[]>();
  // Edges grouped by caller once: a → x → b in O(edges × fan-out), appending in place (no array copy per edge).
  const from = new Map<string, string[]>();
  for (const [x, y] of c.expectedEdges) {
    const l = from.get(x);
    if (l) l.push(y);
    else from.set(x, [y]);
  }
  for (const [x, m] of c.expectedEdges)
    for (const y of from.get(m) ?? [])
      if (!edges.has(`${x}\u001f${y}`)) {
        const k = `${x}\u001f${y}`;
        const l = via.get(k);
        if (l) l.push(m);
        else via.set(k, [m]);
      }
  const reported = new Set<string>();
  for (let i = 0; i < spans.length; i++) {
    // Only where the service changes (parent on another service): no walk up same-service chains per span.
    const p = t.parent[i];
    if (p < 0 || spans[p].service === spans[i].service) continue;
    const k = `${spans[p].service}\u001f${spans[i].service}`;
    const between = via.get(k);
    if (!between || reported.has(k)) continue;
    reported.add(k);
    a.missing.push(`a span from ${between.join(' or ')} between ${spans[p].service} and ${spans[i].service}`);
    for (const x of between) {
      const h = hopAt(a, x, 'unknown');
      h.propagationBreaks++;
      h.evidence.push({
        kind: 'broken_propagation',
        summary: `${spans[p].service} reached ${spans[i].service} directly, but the topology routes it through ${x}: ${x} is uninstrumented or dropped the context`,
        spanId: spans[i].spanId,
      });
    }
  }
}
