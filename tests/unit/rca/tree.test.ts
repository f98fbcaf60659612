import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTree, criticalPath } from '../../../backend-proxy/src/rca/tree';
import { sp } from './helpers';

const pathOf = (spans: ReturnType<typeof sp>[], anchor = 0): Array<[string, number, number]> => {
  const t = buildTree(spans);
  return criticalPath(t, anchor).map((s) => [spans[s.index].name, s.startMs, s.endMs]);
};

test('sequential children: the path alternates parent gaps and each child, chronologically', () => {
  const spans = [
    sp('1', undefined, 'a', 'root', 'server', 0, 100),
    sp('2', '1', 'a', 'c1', 'internal', 10, 40),
    sp('3', '1', 'a', 'c2', 'internal', 50, 90),
  ];
  assert.deepEqual(pathOf(spans), [
    ['root', 0, 10],
    ['c1', 10, 40],
    ['root', 40, 50],
    ['c2', 50, 90],
    ['root', 90, 100],
  ]);
  const t = buildTree(spans);
  assert.deepEqual([...t.self], [30, 30, 40]);
});

test('parallel children: the branch running latest before the cursor blocks; self time subtracts the union', () => {
  const spans = [
    sp('1', undefined, 'a', 'root', 'server', 0, 100),
    sp('2', '1', 'a', 'fast', 'internal', 10, 30),
    sp('3', '1', 'a', 'slow', 'internal', 10, 80),
    sp('4', '1', 'a', 'overlap', 'internal', 70, 85),
  ];
  // overlap ends last (85); before its start (70) slow was still running, so slow blocks [10, 70]; fast never does.
  assert.deepEqual(pathOf(spans), [
    ['root', 0, 10],
    ['slow', 10, 70],
    ['overlap', 70, 85],
    ['root', 85, 100],
  ]);
  const t = buildTree(spans);
  assert.equal(t.self[0], 100 - 75); // children cover [10, 85]
});

test('sequential siblings overlapping by a clock tick stay on the path (not handed to the parent)', () => {
  const spans = [
    sp('1', undefined, 'gw', 'root', 'server', 0, 620),
    sp('2', '1', 'gw', 'call embedding', 'client', 1, 521.6), // ends 0.6 ms after the next call starts
    sp('3', '2', 'emb', 'embed', 'server', 9, 520.4),
    sp('4', '1', 'gw', 'call cache', 'client', 521, 556),
    sp('5', '1', 'gw', 'call llm', 'client', 556, 620),
  ];
  const names = pathOf(spans).map((p) => p[0]);
  assert.deepEqual(names, ['root', 'call embedding', 'embed', 'call embedding', 'call cache', 'call llm']);
  const path = pathOf(spans);
  const embed = path.filter((p) => p[0] === 'embed').reduce((a, p) => a + p[2] - p[1], 0);
  assert.ok(embed > 500, String(embed));
});

test('async children (producer, or outliving a same-service parent) are off the path and not subtracted', () => {
  const spans = [
    sp('1', undefined, 'a', 'root', 'server', 0, 100),
    sp('2', '1', 'a', 'work', 'internal', 10, 60),
    sp('3', '1', 'a', 'publish', 'producer', 60, 150),
    sp('4', '1', 'a', 'fire-and-forget', 'internal', 70, 130),
  ];
  const t = buildTree(spans);
  assert.equal(t.async[2], 1);
  assert.equal(t.async[3], 1);
  assert.equal(t.async[1], 0);
  assert.deepEqual(pathOf(spans), [
    ['root', 0, 10],
    ['work', 10, 60],
    ['root', 60, 100],
  ]);
  assert.equal(t.self[0], 50);
});

test('a failed parent keeps an outliving child synchronous (a timed-out call to a hung callee), clamped to its end', () => {
  const spans = [
    sp('1', undefined, 'a', 'call', 'client', 0, 100, { status: 'timeout' }),
    sp('2', '1', 'b', 'hung', 'server', 5, 400),
  ];
  const t = buildTree(spans);
  assert.equal(t.async[1], 0);
  assert.equal(t.cEnd[1], 100);
  assert.equal(t.serverChild[0], 1);
  assert.ok(Math.abs(t.gap[0] - 5) < 1e-9);
});

test('clock skew: a server span on another host starting before its client is shifted into it; gap stays ≥ 0', () => {
  const spans = [
    sp('1', undefined, 'gw', 'root', 'server', 0, 100),
    sp('2', '1', 'gw', 'call', 'client', 10, 90),
    sp('3', '2', 'llm', 'chat', 'server', 4, 80), // its clock is ~10 ms behind
    sp('4', '3', 'llm', 'decode', 'internal', 20, 70),
  ];
  const t = buildTree(spans);
  assert.ok(Math.abs(t.skewMs[2] - 8) < 1e-9); // centred: 10 + (80 − 76) / 2 − 4
  assert.equal(t.skewMs[3], t.skewMs[2]); // its subtree moves with it
  assert.ok(t.start[2] >= t.start[1] && t.end[2] <= t.end[1]);
  assert.ok(Math.abs(t.gap[1] - 4) < 1e-9);
  const path = pathOf(spans);
  assert.deepEqual(
    path.map((p) => p[0]),
    ['root', 'call', 'chat', 'decode', 'chat', 'call', 'root']
  );
  // The path tiles the anchor's window exactly.
  assert.equal(
    path.reduce((a, p) => a + p[2] - p[1], 0),
    100
  );
});

test('orphans become roots and are reported; a parent cycle does not hang', () => {
  const spans = [
    sp('1', undefined, 'a', 'root', 'server', 0, 10),
    sp('2', 'ff', 'b', 'orphan', 'server', 2, 5),
    sp('3', '4', 'c', 'x', 'internal', 0, 1),
    sp('4', '3', 'c', 'y', 'internal', 0, 1),
  ];
  const t = buildTree(spans);
  assert.deepEqual(t.orphans.slice(0, 1), [1]);
  assert.equal(t.order.length, 4);
  assert.ok(t.roots.includes(0) && t.roots.includes(1));
});

test('a 20,000-deep chain is walked without recursion', () => {
  const n = 20_000;
  const spans = Array.from({ length: n }, (_, i) =>
    sp(String(i + 1), i ? String(i) : undefined, 'a', `s${i}`, 'internal', i, 2 * n - i)
  );
  const t = buildTree(spans);
  const path = criticalPath(t, 0);
  assert.equal(path.length, 2 * n - 1);
  assert.equal(t.self[n - 1], 2);
});
