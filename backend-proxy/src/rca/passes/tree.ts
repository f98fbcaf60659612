/**
 * Tree: Zipkin's shared client/server spans split (`../shared-spans.ts`), duplicates dropped (an exporter
 * retry sends a span twice), parent links, orphans, breadth-first order, and the main root (the one holding most of
 * the trace). No recursion: a deep chain cannot overflow the stack.
 */
import type { TraceAccount } from '../account';
import { capSpans, MAX_SPANS_PER_TRACE } from '../caps';
import { splitSharedSpans } from '../shared-spans';
import { linkSpans } from '../tree';

export function tree(a: TraceAccount): void {
  let t = linkSpans(a.spans);
  // Caps (../caps.ts): the count per span id only when some id came twice.
  if (t.duplicates || a.spans.length > MAX_SPANS_PER_TRACE) {
    const capped = capSpans(a.spans, t.duplicates > 0);
    if (capped.missing.length) {
      t = linkSpans((a.spans = capped.spans));
      a.missing.push(...capped.missing);
    }
  }
  if (t.duplicates) {
    // Zipkin's shared spans (client and server under one id) are two spans, not a retry.
    const shared = splitSharedSpans(a.spans);
    if (shared) t = linkSpans((a.spans = shared));
  }
  if (t.duplicates) {
    // A span exported twice would show up as its own sibling: keep the first copy.
    const input = a.spans;
    const seen = new Set<string>();
    a.spans = input.filter((s) => !seen.has(s.spanId) && (seen.add(s.spanId), true));
    a.missing.push(`nothing: ${input.length - a.spans.length} duplicate span(s) (same span id) were ignored`);
    t = linkSpans(a.spans);
  }
  a.tree = t;
  const n = a.spans.length;
  // The per-span arrays the later passes fill.
  a.inAnchor = new Uint8Array(n);
  a.degraded = new Uint8Array(n);
  a.onPathMs = new Float64Array(n);
  a.excessMs = new Float64Array(n);
  a.z = new Float64Array(n);
  a.callerSide = new Uint8Array(n);
  a.bookedOn = new Array(n);
  a.spanHop = new Array(n);
  a.ops = new Array(n);
  a.inferredKind = new Uint8Array(0);

  // Subtree sizes (reverse BFS) pick the main root: the one holding most of the trace.
  const size = new Int32Array(n).fill(1);
  for (let q = t.order.length - 1; q >= 0; q--) {
    const i = t.order[q];
    if (t.parent[i] >= 0) size[t.parent[i]] += size[i];
  }
  let root = t.roots[0];
  for (const r of t.roots) if (size[r] > size[root] || (size[r] === size[root] && t.start[r] < t.start[root])) root = r;
  a.root = root;
  a.anchor = root;
}
