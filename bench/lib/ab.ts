/**
 * Side-by-side A/B measurement: alternates A and B `rounds` times (ABAB…, never all-A then all-B, so drift on this
 * shared 2-core machine hits both), then reports each side's median and the median of the per-round ratios B/A with
 * its spread (min–max). Identical runs differ by about ±5% here, so read ratios, not absolute numbers.
 */
/**
 * `HOPSCOPE_BENCH_SMOKE=1`: one round of each measure on the smallest inputs, to prove a bench runs from a clean
 * checkout (the static stage's bench smoke test); its figures mean nothing and are not read.
 */
export const SMOKE = /^(1|on|true)$/i.test(process.env.HOPSCOPE_BENCH_SMOKE ?? '');

/** `full` normally, `small` in a smoke run. */
export const smoke = <T>(full: T, small: T): T => (SMOKE ? small : full);

export interface AbResult {
  name: string;
  unit: string;
  a: { label: string; values: number[]; median: number };
  b: { label: string; values: number[]; median: number };
  ratio: { median: number; min: number; max: number };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function abCompare(opts: {
  name: string;
  unit: string;
  a: { label: string; run: () => Promise<number> };
  b: { label: string; run: () => Promise<number> };
  rounds?: number;
}): Promise<AbResult> {
  const rounds = SMOKE ? 1 : Math.max(5, opts.rounds ?? 5);
  const av: number[] = [];
  const bv: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which side goes first each round as well.
    const [first, second] = i % 2 === 0 ? [opts.a, opts.b] : [opts.b, opts.a];
    const x = await first.run();
    const y = await second.run();
    const [a, b] = i % 2 === 0 ? [x, y] : [y, x];
    av.push(a);
    bv.push(b);
    ratios.push(b / a);
  }
  return {
    name: opts.name,
    unit: opts.unit,
    a: { label: opts.a.label, values: av, median: median(av) },
    b: { label: opts.b.label, values: bv, median: median(bv) },
    ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
  };
}

/** Prints rows as an aligned table, then the same data as one JSON line (`BENCH_JSON {...}`) for tools. */
export function report(title: string, rows: Array<Record<string, string | number>>, json: unknown): void {
  console.log(`\n## ${title}`);
  if (rows.length) {
    const cols = Object.keys(rows[0]);
    const fmt = (v: string | number): string =>
      typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v;
    const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c] ?? '').length)));
    console.log(cols.map((c, i) => c.padEnd(widths[i])).join('  '));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(cols.map((c, i) => fmt(r[c] ?? '').padEnd(widths[i])).join('  '));
  }
  console.log(`BENCH_JSON ${JSON.stringify({ title, data: json })}`);
}

export function abRow(r: AbResult): Record<string, string | number> {
  return {
    measure: r.name,
    [`A: ${r.a.label} (${r.unit})`]: r.a.median,
    [`B: ${r.b.label} (${r.unit})`]: r.b.median,
    'ratio B/A (median)': r.ratio.median,
    spread: `${r.ratio.min.toFixed(3)}–${r.ratio.max.toFixed(3)}`,
    rounds: r.a.values.length,
  };
}
