/**
 * The GPU heatmap as a dense grid: rows = GPUs or MIG instances, columns = time steps, one value per cell (0..1 of
 * activity, NaN = no sample, e.g. a DCGM blank sentinel). Pure: the canvas renderer, its tooltip and the tests share
 * the same cell mapping.
 */

export interface HeatmapRow {
  /** Stable id (UUID or host/gpu[/mig]). */
  id: string;
  /** What the row says, e.g. `node-a · GPU 0` or `node-a · GPU 0 · MIG 1g.10gb`. */
  label: string;
  gpu?: string;
  host?: string;
  pod?: string;
  namespace?: string;
  mig?: string;
}

export interface HeatmapGrid {
  rows: HeatmapRow[];
  /** Column times (epoch ms), ascending, evenly spaced. */
  times: number[];
  /** Row-major values in 0..1 (NaN: no data). Length rows × times. */
  values: Float32Array;
  /** The DCGM field the values come from (SM active → GR engine active → GPU util fallback). */
  field: string;
  /** Multiply a 0..1 value by this to show it in the field's unit (100 for %). */
  displayScale: number;
}

/** Builds a grid from per-row series; values of percent fields (0..100) are brought to 0..1. */
export function buildHeatmapGrid(input: {
  rows: HeatmapRow[];
  times: number[];
  values: Array<Array<number | null>>;
  field: string;
  /** 'ratio' when values are 0..1 (DCGM_FI_PROF_*), 'percent' when 0..100 (DCGM_FI_DEV_GPU_UTIL). */
  unit?: 'ratio' | 'percent';
}): HeatmapGrid {
  const unit = input.unit ?? (/GPU_UTIL$/.test(input.field) ? 'percent' : 'ratio');
  const div = unit === 'percent' ? 100 : 1;
  const cols = input.times.length;
  const values = new Float32Array(input.rows.length * cols).fill(NaN);
  input.rows.forEach((_, r) => {
    const series = input.values[r] ?? [];
    for (let c = 0; c < cols; c++) {
      const v = series[c];
      if (v !== null && v !== undefined && Number.isFinite(v)) {
        values[r * cols + c] = Math.min(1, Math.max(0, v / div));
      }
    }
  });
  return { rows: input.rows, times: input.times, values, field: input.field, displayScale: 100 };
}

export interface CellRef {
  row: number;
  col: number;
}

/** Which cell a pixel of a width × height plot area falls in (undefined outside). */
export function cellAtPoint(
  grid: Pick<HeatmapGrid, 'rows' | 'times'>,
  width: number,
  height: number,
  x: number,
  y: number
): CellRef | undefined {
  const rows = grid.rows.length;
  const cols = grid.times.length;
  if (!rows || !cols || x < 0 || y < 0 || x >= width || y >= height) {
    return undefined;
  }
  return {
    row: Math.min(rows - 1, Math.floor((y / height) * rows)),
    col: Math.min(cols - 1, Math.floor((x / width) * cols)),
  };
}

/** The pixel rectangle of a cell (for highlighting), inverse of cellAtPoint. */
export function cellRect(
  grid: Pick<HeatmapGrid, 'rows' | 'times'>,
  width: number,
  height: number,
  cell: CellRef
): { x: number; y: number; w: number; h: number } {
  const w = width / grid.times.length;
  const h = height / grid.rows.length;
  return { x: cell.col * w, y: cell.row * h, w, h };
}

/** The column nearest to a time (for the crosshair shared with the time series). */
export function colAtTime(times: number[], t: number): number | undefined {
  if (!times.length || t < times[0] || t > times[times.length - 1] + (times[1] - times[0] || 0)) {
    return undefined;
  }
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (times[mid] <= t) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

export function cellValue(grid: HeatmapGrid, cell: CellRef): number {
  return grid.values[cell.row * grid.times.length + cell.col];
}

/** Row-major grid → RGBA pixels (one pixel per cell) through a 256-entry colour lookup table; NaN stays transparent. */
export function paintGrid(grid: HeatmapGrid, lut: Uint8ClampedArray, out: Uint8ClampedArray): void {
  const n = grid.values.length;
  for (let i = 0; i < n; i++) {
    const v = grid.values[i];
    const o = i * 4;
    if (v !== v) {
      out[o + 3] = 0;
      continue;
    }
    const k = Math.round(v * 255) * 4;
    out[o] = lut[k];
    out[o + 1] = lut[k + 1];
    out[o + 2] = lut[k + 2];
    out[o + 3] = lut[k + 3];
  }
}

/** Parses `#rgb`, `#rrggbb(aa)` or `rgb(a)(…)` into [r, g, b, a(0..255)]. */
export function parseColor(color: string): [number, number, number, number] {
  const c = color.trim();
  let m = /^#([0-9a-f]{3})$/i.exec(c);
  if (m) {
    const [r, g, b] = m[1].split('').map((h) => parseInt(h + h, 16));
    return [r, g, b, 255];
  }
  m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/i.exec(c);
  if (m) {
    const n = parseInt(m[1], 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255, m[2] ? parseInt(m[2], 16) : 255];
  }
  m = /^rgba?\(([^)]+)\)$/i.exec(c);
  if (m) {
    const p = m[1]
      .split(/[,\s/]+/)
      .filter(Boolean)
      .map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? Math.round((p[3] <= 1 ? p[3] : p[3] / 255) * 255) : 255];
  }
  throw new Error(`Unsupported colour ${color}`);
}

/** A 256-entry RGBA lookup table interpolating evenly between the given colour stops (low → high). */
export function buildLut(stops: string[]): Uint8ClampedArray {
  const parsed = stops.map(parseColor);
  const lut = new Uint8ClampedArray(256 * 4);
  for (let i = 0; i < 256; i++) {
    const f = (i / 255) * (parsed.length - 1);
    const a = Math.min(parsed.length - 2, Math.floor(f));
    const t = f - a;
    for (let ch = 0; ch < 4; ch++) {
      lut[i * 4 + ch] = parsed[a][ch] + (parsed[a + 1][ch] - parsed[a][ch]) * t;
    }
  }
  return lut;
}
