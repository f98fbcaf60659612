/**
 * Every benchmark runs from a clean checkout: each bench/*.bench.ts once with HOPSCOPE_BENCH_SMOKE=1 (one round of
 * each measure on the smallest inputs, bench/lib/ab.ts), which must exit 0 and print its report (`BENCH_JSON`) or
 * say why it skipped (no root, no bpftrace, no PostgreSQL…). The figures of a smoke run mean nothing: none is read.
 * One bench: HOPSCOPE_BENCH_SMOKE=1 npx tsx bench/<name>.bench.ts
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');
// The slowest smokes first (CPU-s measured on a clean run: PGlite children, bpftrace compiling, Chromium), so the two
// at a time finish together rather than one long smoke running alone at the end.
const SLOWEST = ['db-memory', 'bpf-overhead', 'app-runs', 'app-render'];
const rank = (f: string): number => {
  const i = SLOWEST.indexOf(f.replace(/\.bench\.ts$/, ''));
  return i < 0 ? SLOWEST.length : i;
};
const benches = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function runBench(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join('bench', file)], {
      cwd: root,
      env: { ...process.env, HOPSCOPE_BENCH_SMOKE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('every benchmark runs one smoke round', { concurrency: 2 }, () => {
  it('finds the benchmarks', () => assert.ok(benches.length > 0, 'bench/*.bench.ts'));
  for (const file of benches) {
    it(file, async () => {
      const { code, output } = await runBench(file);
      const tail = output.split('\n').slice(-40).join('\n');
      assert.equal(code, 0, `HOPSCOPE_BENCH_SMOKE=1 npx tsx bench/${file} exited ${code}:\n${tail}`);
      assert.match(output, /BENCH_JSON |skipped/, `bench/${file} printed no report and no reason to skip:\n${tail}`);
    });
  }
});
