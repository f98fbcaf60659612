import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { CriticalPathItem, Span } from '../../../contract';
import { buildTraceTree, cellAt, icicleLayout, topSelfTime } from '../../../src/transforms/traceTree';

const T = 'a'.repeat(32);
function span(id: string, parent: string | undefined, service: string, startMs: number, endMs: number): Span {
  return {
    traceId: T,
    spanId: id,
    parentSpanId: parent,
    name: `${service} op`,
    service,
    kind: 'server',
    startMs,
    endMs,
    status: 'ok',
    attributes: {},
    resource: { 'k8s.pod.name': `${service}-0` },
  };
}

// gateway 0..1000 → embedding 10..100, rag 100..950 → llm 150..900 ; vector-cache 20..60 under embedding
const spans = [
  span('g', undefined, 'gateway', 0, 1000),
  span('e', 'g', 'embedding', 10, 100),
  span('v', 'e', 'vector-cache', 20, 60),
  span('r', 'g', 'rag', 100, 950),
  span('l', 'r', 'llm-vllm', 150, 900),
];

test('exclusive time is the span minus the union of its children', () => {
  const tree = buildTraceTree(spans);
  const self = new Map(tree.root.descendants().map((d) => [d.data.id, d.data.selfMs]));
  assert.equal(self.get('g'), 1000 - 940); // children cover 10..950
  assert.equal(self.get('e'), 90 - 40);
  assert.equal(self.get('r'), 850 - 750);
  assert.equal(self.get('l'), 750);
  assert.equal(topSelfTime(tree, 1)[0].id, 'l');
});

test('overlapping children are not double-counted in exclusive time', () => {
  const tree = buildTraceTree([
    span('p', undefined, 'agent', 0, 100),
    span('a', 'p', 'tool', 10, 60),
    span('b', 'p', 'tool', 40, 90),
  ]);
  assert.equal(tree.root.data.selfMs, 100 - 80);
});

test("the critical path is the engine's: the tree marks the spans it names, and computes none itself", () => {
  assert.deepEqual(buildTraceTree(spans).criticalPath, []);
  assert.equal(
    buildTraceTree(spans)
      .root.descendants()
      .some((d) => d.data.critical),
    false
  );
  // As the engine sends it: anchor first, a skew-corrected span, and a span id the trace does not hold (ignored).
  const item = (spanId: string, depth: number, skewCorrectedMs?: number): CriticalPathItem => ({
    spanId,
    depth,
    service: 's',
    pod: 'p',
    operation: 'op',
    kind: 'server',
    status: 'ok',
    startMs: 0,
    endMs: 1,
    durationMs: 1,
    selfMs: 1,
    onPathMs: 1,
    skewCorrectedMs,
  });
  const path = [item('g', 0), item('r', 1, 12), item('l', 2), item('nope', 3)];
  const tree = buildTraceTree(spans, path);
  assert.equal(tree.criticalPath, path);
  const marked = tree.root
    .descendants()
    .filter((d) => d.data.critical)
    .map((d) => d.data.id);
  assert.deepEqual(marked.sort(), ['g', 'l', 'r']);
  assert.equal(tree.root.descendants().find((d) => d.data.id === 'r')!.data.critical!.skewCorrectedMs, 12);
});

test('orphan spans and split traces are reported as broken propagation', () => {
  const tree = buildTraceTree([
    ...spans,
    span('x', 'missing-parent', 'agent', 960, 990),
    span('y', undefined, 'tool', 970, 980),
  ]);
  assert.equal(tree.root.data.id, '__trace__');
  assert.equal(tree.broken.length, 2);
  assert.match(tree.broken.find((b) => b.spanId === 'x')!.summary, /not in the trace/);
  assert.match(tree.broken.find((b) => b.spanId === 'y')!.summary, /second root/);
});

test('icicle layout places spans by time and depth, and hit-testing finds the drawn cell', () => {
  const tree = buildTraceTree(spans);
  const { cells, depth } = icicleLayout(tree);
  assert.equal(depth, 3);
  assert.equal(cells.length, 5);
  const llm = cells.find((c) => c.node.data.id === 'l')!;
  assert.equal(llm.depth, 2);
  assert.equal(llm.x0, 0.15);
  assert.equal(llm.x1, 0.9);
  // 1000 px wide, 20 px rows: x=500,y=45 is depth 2, t=500 ms → llm
  assert.equal(cellAt(cells, 1000, 20, 500, 45)?.node.data.id, 'l');
  assert.equal(cellAt(cells, 1000, 20, 30, 45)?.node.data.id, 'v');
  assert.equal(cellAt(cells, 1000, 20, 980, 45), undefined);
});

test('a 5,000-span trace builds and lays out quickly', () => {
  const many: Span[] = [span('root', undefined, 'gateway', 0, 100_000)];
  for (let i = 1; i < 5000; i++) {
    const parent = i < 50 ? 'root' : `s${Math.floor(i / 50)}`;
    const s = (i % 50) * 1000 + Math.floor(i / 50) * 10;
    many.push(span(i < 50 ? `s${i}` : `s${i}`, parent, `svc${i % 7}`, s, s + 900));
  }
  const t0 = performance.now();
  const tree = buildTraceTree(many);
  const { cells } = icicleLayout(tree);
  const took = performance.now() - t0;
  assert.equal(cells.length, 5000);
  assert.ok(took < 500, `took ${took} ms`);
});
