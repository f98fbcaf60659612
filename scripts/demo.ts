/**
 * The demo: starts every part of Hopscope on 127.0.0.1 (each declared in scripts/demo-parts/*.ts), waits until each
 * answers, prints the URL to open (and what the parts' `notes()` say: where runs are kept, the run of the steady
 * load), and on Ctrl-C (or SIGTERM, or SIGHUP: its terminal closed) stops every process group it started, last started
 * first (so the load generator posts its run while the proxy still runs), leaving nothing behind. When it dies without
 * that cleanup (SIGKILL), its reaper (scripts/demo/reaper.ts, watching a pipe only this process holds) stops the parts;
 * when the process that started it goes (npm killed), it stops them itself. A port a part needs that is taken is said
 * up front, with the process holding it (scripts/demo/port-holder.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DemoContext, DemoPart } from './demo-parts/types';
import { takenPorts } from './demo/port-holder';

const HELP = `Usage: npm start [-- --only name1,name2]

Starts the Hopscope demo on 127.0.0.1 (no Docker): every part found in scripts/demo-parts/.
  --only a,b   start only these parts
  --help       this text
Stop with Ctrl-C: every process started is stopped (also when the demo itself is killed or its terminal closed).`;

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}
const onlyArg = argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set((argv[onlyArg + 1] ?? '').split(',').filter(Boolean)) : undefined;

const root = join(import.meta.dirname, '..');
const ctx: DemoContext = { root, dataDir: mkdtempSync(join(tmpdir(), 'hopscope-demo-')) };
const children: Array<{ name: string; order: number; child: ChildProcess }> = [];
const notes: string[] = [];
let stopping = false;

const notesOf = new Map<string, () => string[]>();

async function loadParts(): Promise<DemoPart[]> {
  const dir = join(import.meta.dirname, 'demo-parts');
  const parts: DemoPart[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && f !== 'types.ts')
    .sort()) {
    const mod = (await import(join(dir, file))) as { part: (ctx: DemoContext) => DemoPart; notes?: () => string[] };
    const p = mod.part(ctx);
    if (only && !only.has(p.name)) continue;
    parts.push(p);
    if (mod.notes) notesOf.set(p.name, mod.notes);
  }
  return parts.sort((a, b) => a.order - b.order);
}

function prefixLines(name: string, stream: NodeJS.ReadableStream | null, out: NodeJS.WriteStream): void {
  let buf = '';
  stream?.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) out.write(`[${name}] ${l}\n`);
  });
}

// The reaper ends every part if this process dies without stopping them (SIGKILL): it watches the pipe to its stdin,
// which only this process holds. Its own process group, so Ctrl-C in the terminal does not reach it.
const reaper = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'demo', 'reaper.ts')], {
  cwd: root,
  detached: true,
  stdio: ['pipe', 'ignore', 'inherit'],
});
reaper.stdin!.on('error', () => undefined);

/** This process's parent pid, from /proc (Node caches process.ppid): when it changes, whoever started the demo is gone. */
function parentPid(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function start(part: DemoPart): ChildProcess {
  // detached → own process group, so stopping kills the whole tree (tsx, bpftrace children…).
  const child = spawn(part.command, part.args, {
    cwd: root,
    env: { ...process.env, ...part.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid) reaper.stdin!.write(`+${child.pid}\n`);
  prefixLines(part.name, child.stdout, process.stdout);
  prefixLines(part.name, child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`[demo] ${part.name} exited (${signal ?? code}); stopping the demo`);
    if (!stopping) void stopAll(1);
  });
  children.push({ name: part.name, order: part.order, child });
  return child;
}

async function waitReady(part: DemoPart, timeoutMs = 60_000): Promise<void> {
  if (!part.readyUrl) return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(part.readyUrl, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${part.name} did not answer ${part.readyUrl} within ${timeoutMs / 1000} s`);
}

const running = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;

async function stopAll(code: number): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  // Last started first, group by group: what depends on a part stops before it (the load generator's final report
  // reaches the proxy, the proxy closes its database before Prometheus goes).
  for (const order of [...new Set(children.map((c) => c.order))].sort((a, b) => b - a)) {
    const group = children.filter((c) => c.order === order);
    for (const { child } of group) {
      if (running(child) && child.pid)
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* gone */
        }
    }
    const deadline = Date.now() + 8000;
    while (group.some(({ child }) => running(child)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    for (const { name, child } of group) {
      if (running(child) && child.pid) {
        console.error(`[demo] ${name} did not stop within 8 s; killing it`);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }
  rmSync(ctx.dataDir, { recursive: true, force: true });
  // Everything is stopped: the reaper has nothing to do.
  reaper.stdin!.end('done\n');
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
// A closed terminal: the same as Ctrl-C.
process.on('SIGHUP', () => void stopAll(0));
// Output to a terminal that is gone must not stop the cleanup.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
const startedBy = parentPid();
setInterval(() => {
  if (startedBy !== undefined && parentPid() !== startedBy && !stopping) {
    console.error('[demo] the process that started the demo is gone; stopping every part');
    void stopAll(1);
  }
}, 1000).unref();

const parts = await loadParts();
const taken = await takenPorts(
  parts.flatMap((p) => (p.ports ?? []).map((x) => ({ port: x.port, env: x.env, part: p.name })))
);
if (taken.length) {
  for (const t of taken) console.error(`[demo] ${t}`);
  console.error('[demo] nothing was started');
  reaper.stdin!.end('done\n');
  rmSync(ctx.dataDir, { recursive: true, force: true });
  process.exit(1);
}
const openUrls: string[] = [];
try {
  for (const order of [...new Set(parts.map((p) => p.order))]) {
    const group = parts.filter((p) => p.order === order);
    const runnable: DemoPart[] = [];
    for (const p of group) {
      const ok = p.available ? await p.available() : true;
      if (ok === true) runnable.push(p);
      else console.log(`[demo] skipping ${p.name}: ${ok}`);
    }
    runnable.forEach(start);
    await Promise.all(runnable.map((p) => waitReady(p)));
    for (const p of runnable) {
      if (p.openUrl) openUrls.push(p.openUrl);
      for (const n of notesOf.get(p.name)?.() ?? []) notes.push(n);
    }
  }
} catch (err) {
  console.error(`[demo] ${(err as Error).message}`);
  await stopAll(1);
}
console.log(
  `\n  Hopscope is running. Open: ${openUrls[0] ?? '(no UI part started)'}\n${notes.map((n) => `  ${n}\n`).join('')}  Stop with Ctrl-C.\n`
);
