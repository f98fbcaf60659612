/**
 * Runs every suite and ends with one line `total: N passed, N failed, N skipped`.
 * Stages: static (typecheck, lint, schemas), unit, integration (real servers), e2e (Chromium through the host).
 * Each test file runs in its own Node process (node:test, as `node --test` does), in four phases (see `phases`):
 * static and unit two at a time; integration two at a time; then each integration file that uses the kernel's
 * shared, root-only state (bpftrace probes, nftables, tracefs, cgroups, network namespaces: see `EXCLUSIVE`, matched
 * on the file and the test helpers it imports) or times answers, alone, since a probe sees every process's traffic
 * and a fault rule every process's packets; then e2e one at a time. At the end, each file's wall and CPU time (the
 * process and everything it waited for: browsers, servers) is printed, slowest first, before the total line.
 * Files start longest first (the wall times of `tests/durations.json`, written by `--record-durations` after a full
 * run; a file not in it counts as 30 s), so a phase does not end on its longest file started last.
 * Usage: tsx tests/run.ts [stage ...] [--only <substring>] [--record-durations]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

interface Stage {
  name: string;
  dir: string;
  timeoutMs: number;
  /** Whether files using the kernel's shared state (EXCLUSIVE) run alone: where tests attach probes and rules. */
  exclusive?: boolean;
}
interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  failures: string[];
}
interface FileResult extends Counts {
  file: string;
  stage: string;
  wallS: number;
  cpuS: number;
  exclusive: boolean;
}

const root = join(import.meta.dirname, '..');
const STAGES: Stage[] = [
  { name: 'static', dir: 'tests/static', timeoutMs: 15 * 60_000 },
  { name: 'unit', dir: 'tests/unit', timeoutMs: 5 * 60_000 },
  { name: 'integration', dir: 'tests/integration', timeoutMs: 10 * 60_000, exclusive: true },
  { name: 'e2e', dir: 'tests/e2e', timeoutMs: 10 * 60_000 },
];

/** The last recorded wall time of each file (tests/durations.json), to start the longest first. */
const DURATIONS_FILE = join(root, 'tests/durations.json');
const durations: Record<string, number> = (() => {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
})();
const expectedS = (file: string): number => durations[file] ?? 30;

/**
 * What marks a file (or a test helper it imports) as using the kernel's shared state, or as measuring latency that a
 * neighbour's load would move (`hopscope-test: alone` in a comment): it then runs alone. An exporter on a recording
 * (HOPSCOPE_BPF_REPLAY) attaches no probe, so `startExporter` alone does not mark a file: one with live probes names
 * them (bpftrace, or the probe helpers of tests/integration/bpf-exporter/helpers.ts that it imports); the exporter's
 * HTTP helpers (…/bpf-exporter/http.ts) mark nothing.
 */
const EXCLUSIVE = /bpftrace|\bnft\b|nftables|tracefs|netns|\/sys\/fs\/cgroup|kernelSkipReason|hopscope-test: alone/;

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

/** Whether `file` or a module under tests/ it imports (transitively, relative imports) matches EXCLUSIVE. */
function isExclusive(file: string, seen = new Set<string>()): boolean {
  const abs = resolve(root, file);
  if (seen.has(abs)) return false;
  seen.add(abs);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch {
    return false;
  }
  if (EXCLUSIVE.test(text)) return true;
  for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const base = resolve(dirname(abs), m[1]);
    if (!base.startsWith(join(root, 'tests'))) continue;
    const found = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find(
      (p) => existsSync(p) && statSync(p).isFile()
    );
    if (found && isExclusive(relative(root, found), seen)) return true;
  }
  return false;
}

/** `times` output (the shell's children: user and system), e.g. `0m1.500s 0m0.250s` on its second line → seconds. */
function childCpuSeconds(times: string): number {
  const line = times.trim().split('\n')[1] ?? '';
  return [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce((s, m) => s + Number(m[1]) * 60 + Number(m[2]), 0);
}

/** The process groups of the files running now, ended with the runner when it is interrupted. */
const groups = new Set<number>();
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.on(signal, () => {
    for (const pid of groups)
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    process.exit(code);
  });

/** Runs one test file in its own Node process (through `sh`, whose `times` reports its CPU), output kept until done. */
function runFile(stage: Stage, file: string, exclusive: boolean): Promise<FileResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hopscope-tests-'));
  const countFile = join(dir, 'counts.json');
  const args = [
    '--import',
    'tsx',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./tests/support/count-reporter.mjs',
    `--test-reporter-destination=${countFile}`,
    file,
  ];
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn('sh', ['-c', '"$@"; rc=$?; times >&3; exit $rc', 'sh', process.execPath, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout ends the file's servers and browsers with it
      env: { ...process.env, HOPSCOPE_TEST_STAGE: stage.name },
    });
    groups.add(child.pid!);
    let output = '';
    let times = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (times += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, stage.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      groups.delete(child.pid!);
      let counts: Counts;
      try {
        counts = JSON.parse(readFileSync(countFile, 'utf8'));
      } catch {
        counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
      }
      rmSync(dir, { recursive: true, force: true });
      if (timedOut) {
        counts.failed++;
        counts.failures.push(`${file}: killed after ${stage.timeoutMs / 1000} s (the stage's time limit per file)`);
      } else if (code !== 0 && counts.failed === 0) {
        counts.failed++;
        counts.failures.push(`${file}: exited with code ${code}${counts.passed ? '' : ' without a report'}`);
      }
      console.log(`\n▶ ${file}${exclusive ? ' (alone)' : ''}\n${output.trimEnd()}`);
      done({
        ...counts,
        file,
        stage: stage.name,
        exclusive,
        wallS: (performance.now() - started) / 1000,
        cpuS: childCpuSeconds(times),
      });
    });
  });
}

interface Job {
  stage: Stage;
  file: string;
  exclusive: boolean;
}

/** Runs jobs longest first, `concurrency` of them at a time. */
async function runPool(jobs: Job[], concurrency: number): Promise<FileResult[]> {
  const queue = [...jobs].sort((a, b) => expectedS(b.file) - expectedS(a.file));
  const results: FileResult[] = [];
  const running = new Set<Promise<void>>();
  for (const job of queue) {
    while (running.size >= concurrency) await Promise.race(running);
    const p: Promise<void> = runFile(job.stage, job.file, job.exclusive).then((r) => {
      results.push(r);
      running.delete(p);
    });
    running.add(p);
  }
  await Promise.all(running);
  return results;
}

/**
 * The stages' files in four phases: static and unit together, two at a time (CPU-bound, no shared state, so the
 * bench smoke's long tail shares the machine with unit files); integration two at a time; the integration files that
 * use the kernel's shared state or time answers, each alone; then e2e one at a time. e2e beside integration (three at
 * a time) was tried in two clean-clone runs: it gained little, since the two stories had to run alone (CPU
 * starvation moved their root-cause ranking), and three timing assumptions broke under the load, each in a different
 * file.
 */
function phases(stages: Stage[], only?: string): Array<{ name: string; jobs: Job[]; concurrency: number }> {
  const jobs = stages.flatMap((stage) =>
    testFiles(stage.dir, only).map((file) => ({ stage, file, exclusive: !!stage.exclusive && isExclusive(file) }))
  );
  const phase = (names: string[], exclusive: boolean, concurrency: number) => {
    const js = jobs.filter((j) => names.includes(j.stage.name) && j.exclusive === exclusive);
    const present = names.filter((n) => js.some((j) => j.stage.name === n)).join(' + ');
    return { name: exclusive ? `${present}, each alone` : present, jobs: js, concurrency };
  };
  return [
    phase(['static', 'unit'], false, 2),
    phase(['integration'], false, 2),
    phase(['integration'], true, 1),
    phase(['e2e'], false, 1),
  ].filter((ph) => ph.jobs.length);
}

const argv = process.argv.slice(2);
const onlyIdx = argv.indexOf('--only');
const only = onlyIdx >= 0 ? argv[onlyIdx + 1] : undefined;
const wanted = argv.filter((a, i) => !a.startsWith('--') && (onlyIdx < 0 || i !== onlyIdx + 1));
const total: Counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
const all: FileResult[] = [];
const started = Date.now();
for (const phase of phases(
  STAGES.filter((s) => !wanted.length || wanted.includes(s.name)),
  only
)) {
  console.log(`\n=== ${phase.name}: ${phase.jobs.length} file(s) ===`);
  const t0 = Date.now();
  const results = await runPool(phase.jobs, phase.concurrency);
  console.log(`--- ${phase.name}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  for (const r of results) total.failures.push(...r.failures);
  all.push(...results);
}
for (const stage of STAGES) {
  const rs = all.filter((r) => r.stage === stage.name);
  if (!rs.length) continue;
  const c = rs.reduce(
    (s, r) => ({ passed: s.passed + r.passed, failed: s.failed + r.failed, skipped: s.skipped + r.skipped }),
    { passed: 0, failed: 0, skipped: 0 }
  );
  console.log(`--- ${stage.name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
}
if (all.length) {
  console.log('\nPer file (wall s, CPU s of the file and its children; * ran alone), slowest first:');
  for (const r of [...all].sort((a, b) => b.wallS - a.wallS))
    console.log(
      `${r.wallS.toFixed(1).padStart(7)} ${r.cpuS.toFixed(1).padStart(7)}  ${r.stage.padEnd(11)} ${r.exclusive ? '*' : ' '} ${r.file}`
    );
  for (const s of STAGES) {
    const rs = all.filter((r) => r.stage === s.name);
    if (rs.length)
      console.log(
        `${s.name}: ${rs.length} files, ${rs.reduce((x, r) => x + r.wallS, 0).toFixed(0)} s wall summed, ${rs.reduce((x, r) => x + r.cpuS, 0).toFixed(0)} s CPU`
      );
  }
}
if (argv.includes('--record-durations') && all.length) {
  const next = { ...durations };
  for (const r of all) next[r.file] = Math.round(r.wallS * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`\nwall times written to ${relative(root, DURATIONS_FILE)}`);
}
if (total.failures.length) console.log(`\nFailures:\n${total.failures.map((f) => `  ✖ ${f}`).join('\n')}`);
console.log(`\n(wall time ${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log(`total: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
