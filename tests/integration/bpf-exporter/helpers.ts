/**
 * Helpers for the bpf-exporter's integration tests that use the kernel: machine checks (bpftrace), child processes, polling
 * the exporter's events. The HTTP ones alone (./http.ts) are for tests that touch no kernel state (replay mode): a file
 * importing this one runs alone (tests/run.ts), one importing only ./http.ts shares the stage.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { machinePreflight } from '../../../bpf-exporter/src/core/preflight';
import type { KernelEvent } from '../../../contract';
import { getJson } from './http';

/** Why this machine cannot run real probes, or undefined when it can. */
export function probeSkipReason(): string | undefined {
  const m = machinePreflight(process.env.HOPSCOPE_BPFTRACE || 'bpftrace');
  return m.ok ? undefined : m.reason;
}

export function has(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}

export function sh(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** A child whose stdout lines can be awaited. */
export function child(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}
): ChildProcess & { lines: string[]; waitLine(re: RegExp, ms?: number): Promise<string> } {
  const c = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcess & { lines: string[]; waitLine(re: RegExp, ms?: number): Promise<string> };
  c.lines = [];
  let buf = '';
  let err = '';
  c.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    c.lines.push(...parts);
  });
  c.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  c.waitLine = async (re, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const hit = c.lines.find((l) => re.test(l));
      if (hit) return hit;
      if (c.exitCode !== null && !c.lines.some((l) => re.test(l))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no line matching ${re} from ${cmd} (stdout: ${c.lines.join(' / ')}; stderr: ${err.slice(-500)})`);
  };
  return c;
}

/** Polls /events until `pred` holds for some event (or throws with what was seen). */
export async function waitForEvents(
  base: string,
  query: string,
  pred: (e: KernelEvent) => boolean,
  ms = 15_000,
  count = 1
): Promise<KernelEvent[]> {
  const deadline = Date.now() + ms;
  let last: KernelEvent[] = [];
  while (Date.now() < deadline) {
    const { body } = await getJson<{ events: KernelEvent[] }>(`${base}/events?${query}`);
    last = body.events;
    const hits = last.filter(pred);
    if (hits.length >= count) return hits;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `no matching event for ${query} within ${ms} ms; saw ${last.length}: ${JSON.stringify(last.slice(-5))}`
  );
}
