/**
 * Runs every suite with node's test runner, stage by stage, and ends with one line `total: N passed, N failed, N skipped`.
 * Stages: static (typecheck, lint, schemas) → unit → integration (real servers) → e2e (Chromium through the host).
 * Usage: tsx tests/run.ts [stage ...] [--only <substring>]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

interface Stage {
  name: string;
  dir: string;
  concurrency: number;
  timeoutMs: number;
}
interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  failures: string[];
}

const root = join(import.meta.dirname, '..');
const STAGES: Stage[] = [
  { name: 'static', dir: 'tests/static', concurrency: 2, timeoutMs: 5 * 60_000 },
  { name: 'unit', dir: 'tests/unit', concurrency: 2, timeoutMs: 5 * 60_000 },
  { name: 'integration', dir: 'tests/integration', concurrency: 1, timeoutMs: 10 * 60_000 },
  { name: 'e2e', dir: 'tests/e2e', concurrency: 1, timeoutMs: 10 * 60_000 },
];

function testFiles(dir: string, only?: string): string[] {
  const abs = join(root, dir);
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries.sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.test\.tsx?$/.test(e) && (!only || relative(root, p).includes(only))) out.push(relative(root, p));
    }
  };
  walk(abs);
  return out;
}

function runStage(stage: Stage, files: string[]): Promise<Counts> {
  const countFile = join(mkdtempSync(join(tmpdir(), 'hopscope-tests-')), 'counts.json');
  const args = [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${stage.concurrency}`,
    `--test-timeout=${stage.timeoutMs}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./tests/support/count-reporter.mjs',
    `--test-reporter-destination=${countFile}`,
    ...files,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, HOPSCOPE_TEST_STAGE: stage.name },
    });
    child.on('exit', (code) => {
      let counts: Counts;
      try {
        counts = JSON.parse(readFileSync(countFile, 'utf8'));
      } catch {
        counts = {
          passed: 0,
          failed: 1,
          skipped: 0,
          failures: [`${stage.name}: test runner exited ${code} without a report`],
        };
      }
      if (code !== 0 && counts.failed === 0) {
        counts.failed = 1;
        counts.failures.push(`${stage.name}: test runner exited with code ${code}`);
      }
      resolve(counts);
    });
  });
}

const argv = process.argv.slice(2);
const onlyIdx = argv.indexOf('--only');
const only = onlyIdx >= 0 ? argv[onlyIdx + 1] : undefined;
const wanted = argv.filter((a, i) => !a.startsWith('--') && (onlyIdx < 0 || i !== onlyIdx + 1));
const total: Counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
const started = Date.now();
for (const stage of STAGES) {
  if (wanted.length && !wanted.includes(stage.name)) continue;
  const files = testFiles(stage.dir, only);
  if (!files.length) continue;
  console.log(`\n=== ${stage.name}: ${files.length} file(s) ===`);
  const c = await runStage(stage, files);
  console.log(`--- ${stage.name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
  total.failures.push(...c.failures);
}
if (total.failures.length) console.log(`\nFailures:\n${total.failures.map((f) => `  ✖ ${f}`).join('\n')}`);
console.log(`\n(wall time ${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
