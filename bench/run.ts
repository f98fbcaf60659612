/**
 * Benchmark runner: `npm run bench` runs every bench/*.bench.ts in turn; `npm run bench -- rca loadgen` runs those
 * whose file name contains one of the words. Each benchmark prints a table and a `BENCH_JSON` line.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(
    'Usage: npm run bench [-- word ...]\nRuns bench/*.bench.ts (those whose name contains a word, if given).'
  );
  process.exit(0);
}
const dir = import.meta.dirname;
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && (!args.length || args.some((a) => f.includes(a))))
  .sort();
if (!files.length) {
  console.error(
    `No benchmark matches ${args.join(' ') || '(any)'}; available: ${
      readdirSync(dir)
        .filter((f) => f.endsWith('.bench.ts'))
        .join(', ') || 'none yet'
    }`
  );
  process.exit(2);
}
let failed = 0;
for (const f of files) {
  console.log(`\n# ${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, f)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
