/**
 * A trace (normalised spans from the proxy) as a tree for the icicle view: parent/child links with d3-hierarchy,
 * exclusive (self) time per span, broken propagation, and a time-based icicle layout. The critical path is not
 * worked out here: the root-cause engine computes it once, with clock-skew correction (RcaAnswer.criticalPath), and
 * the tree marks the spans it names. Pure functions, no DOM: the canvas renderer and the tests share them.
 */
import { hierarchy, type HierarchyNode } from 'd3-hierarchy';

import type { CriticalPathItem, Span } from '../../contract';

/** One node of the tree. The synthetic root (id `__trace__`) exists only when the trace has several roots or orphans. */
export interface SpanNode {
  id: string;
  span?: Span;
  children: SpanNode[];
  /** Time in this span not covered by any child (ms). */
  selfMs: number;
  /** Parent id was given but the parent is not in the trace: the context was lost on the way. */
  orphan: boolean;
  /** The engine's critical-path entry of this span, when the span is on the path. */
  critical?: PathItem;
}

export interface BrokenPropagation {
  spanId: string;
  service: string;
  summary: string;
}

export interface TraceTree {
  root: HierarchyNode<SpanNode>;
  startMs: number;
  endMs: number;
  spanCount: number;
  /** The engine's critical path (anchor first), as given; empty until the root-cause answer is known. */
  criticalPath: PathItem[];
  broken: BrokenPropagation[];
}

export const SYNTHETIC_ROOT = '__trace__';

/** Length of the union of [start,end) intervals clipped to [lo,hi]. */
function coveredMs(intervals: Array<[number, number]>, lo: number, hi: number): number {
  const clipped = intervals
    .map(([s, e]) => [Math.max(s, lo), Math.min(e, hi)] as [number, number])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curS = -Infinity;
  let curE = -Infinity;
  for (const [s, e] of clipped) {
    if (s > curE) {
      if (curE > curS) {
        total += curE - curS;
      }
      curS = s;
      curE = e;
    } else if (e > curE) {
      curE = e;
    }
  }
  if (curE > curS) {
    total += curE - curS;
  }
  return total;
}

const start = (n: SpanNode): number => n.span?.startMs ?? Math.min(...n.children.map(start));
const end = (n: SpanNode): number => n.span?.endMs ?? Math.max(...n.children.map(end));

/** What the tree keeps of the engine's critical-path entries: which span, its time on the path, its skew correction. */
export type PathItem = Pick<CriticalPathItem, 'spanId' | 'onPathMs'> & { skewCorrectedMs?: number | null };

export function buildTraceTree(spans: Span[], criticalPath: PathItem[] = []): TraceTree {
  if (!spans.length) {
    throw new Error('A trace needs at least one span');
  }
  const byId = new Map<string, SpanNode>();
  for (const span of spans) {
    byId.set(span.spanId, { id: span.spanId, span, children: [], selfMs: 0, orphan: false });
  }
  const roots: SpanNode[] = [];
  const broken: BrokenPropagation[] = [];
  for (const node of byId.values()) {
    const parentId = node.span!.parentSpanId;
    const parent = parentId ? byId.get(parentId) : undefined;
    if (parent && parent !== node) {
      parent.children.push(node);
    } else {
      if (parentId) {
        node.orphan = true;
        broken.push({
          spanId: node.id,
          service: node.span!.service,
          summary: `${node.span!.service} "${node.span!.name}" names parent ${parentId}, which is not in the trace (context lost or span dropped)`,
        });
      }
      roots.push(node);
    }
  }
  for (const node of byId.values()) {
    node.children.sort((a, b) => start(a) - start(b));
    const s = node.span!;
    node.selfMs = Math.max(
      0,
      s.endMs -
        s.startMs -
        coveredMs(
          node.children.map((c) => [c.span!.startMs, c.span!.endMs]),
          s.startMs,
          s.endMs
        )
    );
  }
  roots.sort((a, b) => start(a) - start(b));
  const realRoots = roots.filter((r) => !r.orphan);
  if (realRoots.length > 1) {
    for (const r of realRoots.slice(1)) {
      broken.push({
        spanId: r.id,
        service: r.span!.service,
        summary: `${r.span!.service} "${r.span!.name}" starts a second root in the same trace (split trace)`,
      });
    }
  }
  const top: SpanNode =
    roots.length === 1 ? roots[0] : { id: SYNTHETIC_ROOT, children: roots, selfMs: 0, orphan: false };
  for (const item of criticalPath) {
    const node = byId.get(item.spanId);
    if (node) {
      node.critical = item;
    }
  }
  const root = hierarchy(top, (n) => n.children);
  return { root, startMs: start(top), endMs: end(top), spanCount: spans.length, criticalPath, broken };
}

/** One rectangle of the icicle: x by time, y by depth (the layout is independent of pixels: fractions of 0..1). */
export interface IcicleCell {
  node: HierarchyNode<SpanNode>;
  x0: number;
  x1: number;
  depth: number;
}

/** Lays the tree out by time (x0/x1 as fractions of the trace duration) and depth, in pre-order (parents first). */
export function icicleLayout(tree: TraceTree): { cells: IcicleCell[]; depth: number } {
  const span = Math.max(1e-6, tree.endMs - tree.startMs);
  const cells: IcicleCell[] = [];
  const offset = tree.root.data.id === SYNTHETIC_ROOT ? 1 : 0;
  let maxDepth = 0;
  tree.root.eachBefore((node) => {
    if (node.data.id === SYNTHETIC_ROOT) {
      return;
    }
    const s = node.data.span!;
    const depth = node.depth - offset;
    maxDepth = Math.max(maxDepth, depth);
    cells.push({ node, x0: (s.startMs - tree.startMs) / span, x1: (s.endMs - tree.startMs) / span, depth });
  });
  return { cells, depth: maxDepth + 1 };
}

/** The cell under a point, given the layout in pixels (the topmost, i.e. the deepest hit is the one drawn last). */
export function cellAt(
  cells: IcicleCell[],
  width: number,
  rowHeight: number,
  x: number,
  y: number
): IcicleCell | undefined {
  const depth = Math.floor(y / rowHeight);
  const f = x / width;
  // Binary search would need cells grouped by depth; a linear scan of one depth is fast enough for 5,000 spans.
  let hit: IcicleCell | undefined;
  for (const c of cells) {
    if (c.depth === depth && f >= c.x0 && f <= Math.max(c.x1, c.x0 + 1 / width)) {
      hit = c;
    }
  }
  return hit;
}

/** Spans sorted by self time, longest first: where the time went. */
export function topSelfTime(tree: TraceTree, n = 10): SpanNode[] {
  const all = tree.root
    .descendants()
    .map((d) => d.data)
    .filter((d) => d.span);
  return all.sort((a, b) => b.selfMs - a.selfMs).slice(0, n);
}

/** The pod of a span, from its resource attributes (k8s.pod.name), if the exporter set it. */
export function podOf(span: Span): string | undefined {
  const v = span.resource['k8s.pod.name'] ?? span.attributes['k8s.pod.name'];
  return typeof v === 'string' ? v : undefined;
}
