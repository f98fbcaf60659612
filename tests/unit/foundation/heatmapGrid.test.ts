import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  buildHeatmapGrid,
  buildLut,
  cellAtPoint,
  cellRect,
  cellValue,
  colAtTime,
  paintGrid,
  parseColor,
} from '../../host/client/panels/heatmapGrid';

const rows = [
  { id: 'u0', label: 'node-a · GPU 0' },
  { id: 'u1', label: 'node-a · GPU 1' },
];
const times = [0, 1000, 2000, 3000];

test('percent fields are normalised to 0..1 and missing samples stay NaN', () => {
  const g = buildHeatmapGrid({ rows, times, field: 'DCGM_FI_DEV_GPU_UTIL', values: [[0, 50, null, 100], [25]] });
  assert.deepEqual(
    Array.from(g.values.slice(0, 4)).map((v) => (Number.isNaN(v) ? 'NaN' : v)),
    [0, 0.5, 'NaN', 1]
  );
  assert.equal(g.values[4], 0.25);
  assert.ok(Number.isNaN(g.values[5]));
  const r = buildHeatmapGrid({ rows, times, field: 'DCGM_FI_PROF_SM_ACTIVE', values: [[0.9], [1.7]] });
  assert.ok(Math.abs(r.values[0] - 0.9) < 1e-6);
  assert.equal(r.values[4], 1, 'clamped');
});

test('pixel → cell → pixel mapping is consistent at the edges', () => {
  const g = { rows, times };
  assert.deepEqual(cellAtPoint(g, 400, 100, 0, 0), { row: 0, col: 0 });
  assert.deepEqual(cellAtPoint(g, 400, 100, 399.9, 99.9), { row: 1, col: 3 });
  assert.deepEqual(cellAtPoint(g, 400, 100, 150, 60), { row: 1, col: 1 });
  assert.equal(cellAtPoint(g, 400, 100, 400, 50), undefined);
  assert.equal(cellAtPoint(g, 400, 100, -1, 50), undefined);
  const rect = cellRect(g, 400, 100, { row: 1, col: 2 });
  assert.deepEqual(rect, { x: 200, y: 50, w: 100, h: 50 });
  assert.deepEqual(cellAtPoint(g, 400, 100, rect.x + rect.w / 2, rect.y + rect.h / 2), { row: 1, col: 2 });
});

test('the crosshair time maps to its column', () => {
  assert.equal(colAtTime(times, 0), 0);
  assert.equal(colAtTime(times, 1999), 1);
  assert.equal(colAtTime(times, 3500), 3);
  assert.equal(colAtTime(times, -1), undefined);
  assert.equal(colAtTime(times, 5000), undefined);
});

test('painting uses the lookup table and leaves no-data cells transparent', () => {
  const g = buildHeatmapGrid({
    rows,
    times,
    field: 'DCGM_FI_PROF_SM_ACTIVE',
    values: [
      [0, 1, null, 0.5],
      [1, 1, 1, 1],
    ],
  });
  assert.equal(cellValue(g, { row: 0, col: 3 }), 0.5);
  const lut = buildLut(['#000000', '#ff0000']);
  const px = new Uint8ClampedArray(8 * 4);
  paintGrid(g, lut, px);
  assert.deepEqual(Array.from(px.slice(0, 4)), [0, 0, 0, 255]);
  assert.deepEqual(Array.from(px.slice(4, 8)), [255, 0, 0, 255]);
  assert.equal(px[8 + 3], 0);
  assert.equal(px[12], 128);
});

test('colour parsing accepts the forms theme tokens use', () => {
  assert.deepEqual(parseColor('#abc'), [170, 187, 204, 255]);
  assert.deepEqual(parseColor('#11223380'), [17, 34, 51, 128]);
  assert.deepEqual(parseColor('rgba(10, 20, 30, 0.5)'), [10, 20, 30, 128]);
  assert.throws(() => parseColor('hotpink'));
});
