/**
 * A trace as an index-based tree: parent links, orphans, clock-skew-corrected and parent-clamped windows, exclusive
 * (self) time, the client→server gap, and the critical path. Arrays indexed by span position keep 50k-span traces
 * in a few milliseconds; nothing here recurses, so a deep chain cannot overflow the stack.
 */
import { isFailedSpan, type Span } from '../../../contract';
import { inferCallRoles } from './roles';
import { capSpans, MAX_SPANS_PER_TRACE } from './caps';
import { splitSharedSpans } from './shared-spans';
import type { TraceTree } from './trace-tree';

export type { TraceTree };

/**
 * Parent links, orphans and breadth-first order; the windows as recorded (no skew correction, no clamping yet) and
 * the per-span arrays the later steps fill. Spans in a parent cycle (corrupt input) become extra roots.
 */
export function linkSpans(spans: Span[]): TraceTree {
  const n = spans.length;
  // Set from the last span to the first, so the first copy of a duplicated id wins with one map operation per span.
  const byId = new Map<string, number>();
  for (let i = n - 1; i >= 0; i--) byId.set(spans[i].spanId, i);
  const duplicates = n - byId.size;
  const parent = new Int32Array(n).fill(-1);
  // Leaves share one empty array (never mutated): half the spans of a big trace are leaves.
  const EMPTY: number[] = [];
  const children: number[][] = new Array<number[]>(n).fill(EMPTY);
  const roots: number[] = [];
  const orphans: number[] = [];
  for (let i = 0; i < n; i++) {
    const pid = spans[i].parentSpanId;
    const p = pid === undefined ? undefined : byId.get(pid);
    if (p === undefined || p === i) {
      roots.push(i);
      if (pid !== undefined) orphans.push(i);
    } else {
      parent[i] = p;
      if (children[p] === EMPTY) children[p] = [i];
      else children[p].push(i);
    }
  }
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    start[i] = spans[i].startMs;
    end[i] = Math.max(spans[i].startMs, spans[i].endMs);
  }
  const order: number[] = [];
  const seen = new Uint8Array(n);
  const visit = (r: number): void => {
    seen[r] = 1;
    order.push(r);
    for (let q = order.length - 1; q < order.length; q++) {
      for (const c of children[order[q]])
        if (!seen[c]) {
          seen[c] = 1;
          order.push(c);
        }
    }
  };
  for (const r of roots) visit(r);
  for (let i = 0; i < n; i++) {
    if (!seen[i]) {
      parent[i] = -1;
      roots.push(i);
      orphans.push(i);
      visit(i);
    }
  }
  for (const c of children) if (c.length > 1) c.sort((a, b) => start[a] - start[b] || a - b);
  return {
    spans,
    parent,
    children,
    roots,
    orphans,
    start,
    end,
    cStart: new Float64Array(n),
    cEnd: new Float64Array(n),
    async: new Uint8Array(n),
    skewMs: new Float64Array(n),
    self: new Float64Array(n),
    gap: new Float64Array(n).fill(NaN),
    serverChild: new Int32Array(n).fill(-1),
    order,
    duplicates,
  };
}

/**
 * Clock skew: a child on another host (other service) outside its parent's window is shifted, with its subtree, to
 * the middle of the parent (as Jaeger does); a child longer than its parent is only aligned on the start.
 */
export function correctClockSkew(t: TraceTree): void {
  const { spans, parent, start, end, skewMs } = t;
  for (const i of t.order) {
    const p = parent[i];
    if (p < 0) continue;
    const shift = skewMs[p];
    start[i] += shift;
    end[i] += shift;
    let delta = 0;
    if (spans[i].service !== spans[p].service && (start[i] < start[p] || end[i] > end[p])) {
      const dur = end[i] - start[i];
      const pdur = end[p] - start[p];
      if (dur <= pdur) delta = start[p] + (pdur - dur) / 2 - start[i];
      else if (start[i] < start[p]) delta = start[p] - start[i];
    }
    start[i] += delta;
    end[i] += delta;
    skewMs[i] = shift + delta;
  }
}

/**
 * Each window clamped into its parent's clamped window (what the parent can have waited for), and the children the
 * parent did not wait for marked async: producer/consumer spans, children starting after their parent ended, and
 * same-service children outliving a parent that did not fail (fire-and-forget, not skew).
 */
export function clampToParents(t: TraceTree, asyncToleranceMs = 1): void {
  const { spans, parent, start, end, cStart, cEnd, async } = t;
  for (const i of t.order) {
    const p = parent[i];
    if (p < 0) {
      cStart[i] = start[i];
      cEnd[i] = end[i];
      continue;
    }
    const k = spans[i].kind;
    const outlives = end[i] > cEnd[p] + asyncToleranceMs && !isFailedSpan(spans[p]);
    if (
      k === 'producer' ||
      k === 'consumer' ||
      start[i] >= cEnd[p] ||
      async[p] ||
      (outlives && spans[i].service === spans[p].service)
    ) {
      async[i] = 1;
    }
    cStart[i] = Math.min(Math.max(start[i], cStart[p]), cEnd[p]);
    cEnd[i] = Math.max(Math.min(end[i], cEnd[p]), cStart[i]);
  }
}

/**
 * Exclusive time: the clamped window minus the union of the synchronous children's clamped windows; for a client
 * span, its server child (the longest synchronous child on another service, or a server span) and the gap between.
 */
export function exclusiveTimes(t: TraceTree): void {
  const { spans, children, cStart, cEnd, async, self, gap, serverChild } = t;
  const n = spans.length;
  for (let i = 0; i < n; i++) {
    const ch = children[i];
    if (ch.length === 0) {
      self[i] = Math.max(0, cEnd[i] - cStart[i]);
      continue;
    }
    let covered = 0;
    let curS = -Infinity;
    let curE = -Infinity;
    for (const c of ch) {
      if (async[c]) continue;
      const s = cStart[c];
      const e = cEnd[c];
      if (s > curE) {
        if (curE > curS) covered += curE - curS;
        curS = s;
        curE = e;
      } else if (e > curE) curE = e;
    }
    if (curE > curS) covered += curE - curS;
    self[i] = Math.max(0, cEnd[i] - cStart[i] - covered);
    if (spans[i].kind === 'client') {
      let best = -1;
      for (const c of ch) {
        if (async[c] || (spans[c].kind !== 'server' && spans[c].service === spans[i].service)) continue;
        if (best < 0 || cEnd[c] - cStart[c] > cEnd[best] - cStart[best]) best = c;
      }
      if (best >= 0) {
        serverChild[i] = best;
        gap[i] = Math.max(0, cEnd[i] - cStart[i] - (cEnd[best] - cStart[best]));
      }
    }
  }
}

/**
 * The whole tree in one call (the baseline's statistics need every span's exclusive time), shaped as the analysis
 * shapes it: Zipkin's shared client/server spans split (`shared-spans.ts`), the call roles of kind-less spans
 * inferred (`roles.ts`); `t.spans` then holds those spans.
 */
export function buildTree(input: Span[], asyncToleranceMs = 1): TraceTree {
  let spans = input;
  let t = linkSpans(spans);
  if (t.duplicates || spans.length > MAX_SPANS_PER_TRACE) {
    const capped = capSpans(spans, t.duplicates > 0);
    if (capped.spans !== spans) t = linkSpans((spans = capped.spans));
  }
  const shared = t.duplicates ? splitSharedSpans(spans) : undefined;
  if (shared) t = linkSpans(shared);
  const roles = inferCallRoles(t);
  if (roles) t.spans = roles.spans;
  correctClockSkew(t);
  clampToParents(t, asyncToleranceMs);
  exclusiveTimes(t);
  return t;
}

export interface PathSegment {
  index: number;
  startMs: number;
  endMs: number;
}

/**
 * The critical path under `anchor`, walked backwards from its end. At each span, with the cursor at time t, the next
 * blocker is the synchronous child that was running latest before t: the child with the latest end among those that
 * started before t (its end clamped to t). A child overlapping the cursor — a sibling that ends a hair after the next
 * one starts (clock granularity), or a parallel branch still running — is taken rather than skipped, which a strict
 * "ended before t" rule (Jaeger's) would do, handing its time to the parent. Descend into it; when it is exhausted
 * return to the parent at the child's start. Time no child covers is the span's own. Segments come out
 * chronologically.
 */
export function criticalPath(t: TraceTree, anchor: number): PathSegment[] {
  const segs: PathSegment[] = [];
  // Per span: its synchronous children sorted by clamped end, and a pointer that only moves down (children above it
  // are visited, or started after the cursor and so can never block it again).
  const n = t.spans.length;
  const sorted: Array<number[] | undefined> = new Array(n);
  const ptr = new Int32Array(n);
  const byEnd = (a: number, b: number): number => t.cEnd[a] - t.cEnd[b] || t.cStart[a] - t.cStart[b] || a - b;
  const kids = (i: number): number[] => {
    let s = sorted[i];
    if (!s) {
      const ch = t.children[i];
      s = ch.length === 0 ? ch : ch.filter((c) => !t.async[c]).sort(byEnd);
      sorted[i] = s;
      ptr[i] = s.length - 1;
    }
    return s;
  };
  let cur = anchor;
  let cursor = t.cEnd[anchor];
  for (;;) {
    const ks = kids(cur);
    let p = ptr[cur];
    while (p >= 0 && t.cStart[ks[p]] >= cursor) p--;
    if (p >= 0) {
      const c = ks[p];
      ptr[cur] = p - 1;
      const end = Math.min(t.cEnd[c], cursor);
      if (cursor > end) segs.push({ index: cur, startMs: end, endMs: cursor });
      cur = c;
      cursor = end;
      continue;
    }
    ptr[cur] = -1;
    const from = t.cStart[cur];
    if (cursor > from) segs.push({ index: cur, startMs: from, endMs: cursor });
    if (cur === anchor) break;
    cursor = Math.min(cursor, from);
    cur = t.parent[cur];
  }
  segs.reverse();
  return segs;
}
