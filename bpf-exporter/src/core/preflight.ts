/**
 * Checks, before a bpftrace child is started, everything a probe needs, so /health says exactly why a probe is not
 * attached (not root, bpftrace missing, no tracefs, no BTF, tracepoint or file or symbol missing).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import type { Requirement } from './probe';
import { bpfPath, unsafePathReason } from './probe-path';

const run = promisify(execFile);

export type NotAttachedCode =
  | 'not_root'
  | 'bpftrace_missing'
  | 'no_tracefs'
  | 'no_btf'
  | 'tracepoint_missing'
  | 'file_missing'
  | 'symbol_missing'
  | 'bpftrace_failed'
  | 'no_targets'
  | 'disabled'
  | 'replay_mode';

export type Preflight = { ok: true } | { ok: false; code: NotAttachedCode; reason: string };

export function findBinary(name: string): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined;
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export function tracefsEvents(): string | undefined {
  return ['/sys/kernel/tracing/events', '/sys/kernel/debug/tracing/events'].find((p) => existsSync(p));
}

/** Machine-wide checks shared by every probe. */
export function machinePreflight(
  bpftrace: string
): { ok: true; bin: string } | { ok: false; code: NotAttachedCode; reason: string } {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return {
      ok: false,
      code: 'not_root',
      reason: `not root (uid ${process.getuid()}): loading eBPF programs needs root or CAP_BPF+CAP_PERFMON`,
    };
  }
  const bin = findBinary(bpftrace);
  if (!bin)
    return {
      ok: false,
      code: 'bpftrace_missing',
      reason: `bpftrace not found (${bpftrace}); install it (apt-get install bpftrace) or set HOPSCOPE_BPFTRACE`,
    };
  if (!tracefsEvents()) {
    return {
      ok: false,
      code: 'no_tracefs',
      reason: 'tracefs not mounted: run `mount -t tracefs nodev /sys/kernel/tracing`',
    };
  }
  return { ok: true, bin };
}

/** Listings kept (oldest dropped past it): one per file and symbol group, so a node with many files stays bounded. */
export const SYMBOL_CACHE_MAX = 512;
const symbolCache = new Map<string, Promise<string[]>>();

/**
 * Symbols bpftrace can attach uprobes to in `path` (bpftrace -l lists exactly what it would accept). A path outside
 * the allowed characters (probe-path.ts) has none: it is never put into a listing nor a program.
 */
export function listSymbols(bin: string, path: string, pattern: string): Promise<string[]> {
  if (unsafePathReason(path) || !/^[A-Za-z0-9_*]+$/.test(pattern)) return Promise.resolve([]);
  const key = `${path}\0${pattern}`;
  let p = symbolCache.get(key);
  if (!p) {
    p = run(bin, ['-l', `uprobe:${bpfPath(path)}:${pattern}`], { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 })
      .then(({ stdout }) =>
        stdout
          .split('\n')
          .map((l) => l.trim().split(':').pop() ?? '')
          .filter(Boolean)
      )
      .catch(() => []);
    if (symbolCache.size >= SYMBOL_CACHE_MAX) symbolCache.delete(symbolCache.keys().next().value as string);
    symbolCache.set(key, p);
    // A library may be installed later: forget failures and empty answers after a while.
    void p.then((s) => {
      if (!s.length) setTimeout(() => symbolCache.get(key) === p && symbolCache.delete(key), 10_000).unref();
    });
  }
  return p;
}

/** How many listings are cached now (bounded by SYMBOL_CACHE_MAX). */
export const symbolCacheSize = (): number => symbolCache.size;

export async function probePreflight(reqs: Requirement[]): Promise<Preflight> {
  const events = tracefsEvents();
  for (const r of reqs) {
    if (r.kind === 'tracepoint') {
      if (!events || !existsSync(join(events, r.category, r.name))) {
        return {
          ok: false,
          code: 'tracepoint_missing',
          reason: `tracepoint ${r.category}:${r.name} not in this kernel`,
        };
      }
      if (!existsSync('/sys/kernel/btf/vmlinux')) {
        return {
          ok: false,
          code: 'no_btf',
          reason: 'no BTF (/sys/kernel/btf/vmlinux): struct sock fields cannot be read',
        };
      }
    } else if (!existsSync(r.path))
      return { ok: false, code: 'file_missing', reason: `${r.what} not found: ${r.path}` };
  }
  return { ok: true };
}

/**
 * Which of `symbols` the file exports, as bpftrace would attach them: one listing per group of symbols sharing a
 * prefix (listing every symbol of a 100 MB node binary is slow).
 */
export async function exportedSymbols(bin: string, path: string, symbols: string[]): Promise<Set<string>> {
  const groups = new Map<string, string[]>();
  for (const s of symbols) {
    const key = s.slice(0, 4);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const have = new Set<string>();
  for (const group of groups.values())
    for (const s of await listSymbols(bin, path, `${commonPrefix(group)}*`)) have.add(s);
  return have;
}

function commonPrefix(xs: string[]): string {
  if (!xs.length) return '';
  let p = xs[0];
  for (const x of xs) while (!x.startsWith(p)) p = p.slice(0, -1);
  return p;
}
