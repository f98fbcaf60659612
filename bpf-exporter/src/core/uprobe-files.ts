/**
 * The files the workloads actually run, for the uprobe probes: node binaries, libssl.so.3, libcuda. A uprobe attaches
 * to a file (its inode) and fires in every process that maps it, so the files worth probing are the ones the pods'
 * processes map, not the exporter's own: found in /proc/<pid>/maps of
 *   - registered processes (POST /register) and
 *   - processes whose cgroup names a pod or a container (not the exporter's own cgroup),
 * each mapped path reached through /proc/<pid>/root (a container's file lives in its own mount namespace), deduplicated
 * by the device and inode the kernel maps (containers of one image share one file: one attach). The plain path is
 * used when it is the same file (host processes), so the attach survives the process that revealed it.
 * Rescanned every HOPSCOPE_BPF_SCAN_MS and soon after a registration; a process's maps are read again only when its
 * address space grew or shrank (vsize in /proc/<pid>/stat), so a quiet node costs a readdir and a few small reads.
 * Explicit files (HOPSCOPE_BPF_LIBCUDA …) are always kept. Bounded: at most MAX_FILES_PER_KIND files per kind (later
 * ones are reported, not attached), at most MAX_REFUSALS refusals kept (oldest dropped, the count kept whole) and a
 * bounded per-process cache.
 * Pods choose these paths, so: a path outside the characters of probe-path.ts is refused (never put into a program),
 * and with `usable` (the exporter passes a symbol check) a file counts toward its kind's cap only once it exports
 * what a probe needs: 16 dummy `libssl.so.3` files cannot take the places of the real one.
 */
import { EventEmitter } from 'node:events';
import { existsSync as exists, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BoundedCache } from '../attribution/bounded-cache';
import { parseCgroupPath, pickCgroupPath } from '../attribution/cgroup-path';
import { unsafePathReason } from './probe-path';

export const MAX_FILES_PER_KIND = 16;
/** Refusals kept for /health (the oldest dropped past it; `refusedTotal` counts them all). */
export const MAX_REFUSALS = 64;
/** Files waiting for their symbol check; past it a process's maps are read again at the next scan. */
const MAX_PENDING = 256;
/** Pids listed per file in /health (the count is kept whole). */
const PIDS_SHOWN = 8;

export interface UprobeFile {
  /** The kind (`node`, `libssl`, `libcuda`). */
  file: string;
  /** `<major>:<minor>:<inode>` of the file the kernel maps (as /proc/<pid>/maps gives it). */
  id: string;
  /** The path in the process's own mount namespace (explicit: as configured). */
  mappedPath: string;
  /** The path that reaches the same file from the exporter. */
  path: string;
  source: 'explicit' | 'discovered';
  /** A few processes mapping it, and how many were seen in all. */
  pids: number[];
  processes: number;
  since: number;
}

/** A file that could not be used, and why (shown in /health). */
export interface UprobeFileRefusal {
  file: string;
  path: string;
  reason: string;
}

export interface UprobeFilesOptions {
  /** File kinds and how to recognise one by its base name. */
  kinds: Array<{ file: string; matches(base: string): boolean }>;
  /** Files named in the configuration, per kind. */
  explicit: Record<string, string[]>;
  /** Registered pids (looked at whatever their cgroup). */
  registered: () => Iterable<number>;
  /** 0 = no discovery (explicit files only). */
  scanMs: number;
  selfPid: number;
  procRoot?: string;
  /**
   * Whether a found file is one a probe can use (`true`), or why not: checked before the file counts toward its
   * kind's cap (asynchronous: bpftrace lists its symbols). Without it every file found counts at once.
   */
  usable?: (file: string, path: string) => Promise<true | string>;
}

interface Candidate {
  file: string;
  id: string;
  mappedPath: string;
  path: string;
  pid: number;
}

interface ProcState {
  vsize: string;
  workload: boolean;
}

export class UprobeFiles extends EventEmitter {
  private readonly byId = new Map<string, UprobeFile>();
  private readonly refused = new Map<string, UprobeFileRefusal>();
  private readonly procs = new BoundedCache<number, ProcState>(8192, 10 * 60_000);
  /** Files found but not yet symbol-checked, and files that failed the check (not checked again for a while). */
  private readonly pending = new Map<string, Candidate>();
  private readonly unusable = new BoundedCache<string, string>(4096, 10 * 60_000);
  private checking = false;
  private stopped = false;
  /** Every refusal ever recorded (the kept ones are bounded by MAX_REFUSALS). */
  refusedTotal = 0;
  private readonly procRoot: string;
  private readonly selfCgroup?: string;
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  scans = 0;
  lastScanMs = 0;

  constructor(private readonly opts: UprobeFilesOptions) {
    super();
    this.procRoot = opts.procRoot ?? '/proc';
    this.selfCgroup = this.cgroupOf(opts.selfPid);
    for (const [file, paths] of Object.entries(opts.explicit)) for (const p of paths) this.addExplicit(file, p);
  }

  start(): void {
    this.scan();
    if (this.opts.scanMs > 0) {
      this.timer = setInterval(() => this.scan(), this.opts.scanMs);
      this.timer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
  }

  /** A new registration: look at it shortly (coalesced), not only at the next period. */
  scanSoon(delayMs = 300): void {
    if (this.opts.scanMs <= 0 || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.scan();
    }, delayMs);
    this.soon.unref();
  }

  /**
   * Files of a kind that can be attached now, in the order they were found (explicit first). A container's file is
   * reached through a process's root: when that process is gone another one mapping it is used, else the file is
   * dropped (found again if a live process maps it).
   */
  files(file: string): UprobeFile[] {
    const out: UprobeFile[] = [];
    for (const f of this.byId.values()) {
      if (f.file !== file) continue;
      if (f.source === 'discovered' && f.path !== f.mappedPath && !exists(f.path)) {
        const alive = f.pids.map((pid) => this.reach(pid, f.mappedPath)).find((p) => p !== undefined);
        if (!alive) {
          this.byId.delete(f.id);
          continue;
        }
        f.path = alive;
      }
      out.push(f);
    }
    return out;
  }

  refusals(file: string): UprobeFileRefusal[] {
    return [...this.refused.values()].filter((r) => r.file === file);
  }

  /** One pass over the candidate processes; emits `change` with the kinds that gained a file. */
  scan(): void {
    if (this.opts.scanMs <= 0) return;
    const t0 = Date.now();
    const changed = new Set<string>();
    const registered = new Set(this.opts.registered());
    const pids = new Set(registered);
    try {
      for (const n of readdirSync(this.procRoot)) if (/^\d+$/.test(n)) pids.add(Number(n));
    } catch {
      /* no /proc */
    }
    for (const pid of pids) {
      if (pid === this.opts.selfPid) continue;
      const vsize = this.vsizeOf(pid);
      if (vsize === undefined) {
        this.procs.delete(pid);
        continue;
      }
      const known = this.procs.get(pid);
      const isRegistered = registered.has(pid);
      // Unchanged address space: its mappings are the ones already read (and its cgroup the one already judged).
      if (known && known.vsize === vsize && (known.workload || !isRegistered)) continue;
      const workload = isRegistered || this.isWorkload(pid);
      this.procs.set(pid, { vsize, workload });
      if (workload) for (const k of this.readMaps(pid)) changed.add(k);
    }
    this.scans++;
    this.lastScanMs = Date.now() - t0;
    if (changed.size) this.emit('change', [...changed]);
    if (this.pending.size) void this.checkPending();
  }

  private addExplicit(file: string, path: string): void {
    const unsafe = unsafePathReason(path);
    if (unsafe) return this.refuse(`${file}|${path}`, { file, path: path.slice(0, 300), reason: unsafe });
    try {
      const st = statSync(path);
      // Linux's dev_t: minor in bits 0-7 and 20-43, major in bits 8-19 and 44+ (maps prints them apart).
      const major = (Math.floor(st.dev / 2 ** 8) % 2 ** 12) + Math.floor(st.dev / 2 ** 44) * 2 ** 12;
      const minor = (st.dev % 2 ** 8) + (Math.floor(st.dev / 2 ** 20) % 2 ** 24) * 2 ** 8;
      const id = `${major}:${minor}:${st.ino}`;
      this.byId.set(id, {
        file,
        id,
        mappedPath: path,
        path,
        source: 'explicit',
        pids: [],
        processes: 0,
        since: Date.now(),
      });
    } catch (err) {
      this.refuse(`${file}|${path}`, {
        file,
        path,
        reason: `configured file not found: ${(err as NodeJS.ErrnoException).code ?? err}`,
      });
    }
  }

  /** Records why a file is not used; the oldest refusals go past MAX_REFUSALS. */
  private refuse(key: string, r: UprobeFileRefusal): void {
    if (!this.refused.has(key)) this.refusedTotal++;
    this.refused.delete(key);
    if (this.refused.size >= MAX_REFUSALS) this.refused.delete(this.refused.keys().next().value as string);
    this.refused.set(key, r);
  }

  /** Discovered files of a kind that count toward its cap. */
  private countOf(file: string): number {
    return this.files(file).length;
  }

  /** Symbol-checks the pending files one at a time; a usable one counts toward the cap, the others are refused. */
  private async checkPending(): Promise<void> {
    if (this.checking || !this.opts.usable) return;
    this.checking = true;
    const changed = new Set<string>();
    try {
      for (let next = this.pending.values().next(); !next.done; next = this.pending.values().next()) {
        const c = next.value;
        this.pending.delete(c.id);
        if (this.byId.has(c.id)) continue;
        const ok = await this.opts.usable(c.file, c.path).catch((err: Error) => `symbol check failed: ${err.message}`);
        if (this.stopped) return;
        if (ok !== true) {
          this.unusable.set(c.id, ok);
          this.refuse(`${c.file}|${c.id}`, { file: c.file, path: c.mappedPath, reason: ok });
          continue;
        }
        if (this.add(c)) changed.add(c.file);
      }
    } finally {
      this.checking = false;
    }
    if (changed.size) this.emit('change', [...changed]);
  }

  /** A file that passed every check: counted toward the cap, or refused over it. Whether it was added. */
  private add(c: Candidate): boolean {
    if (this.countOf(c.file) >= MAX_FILES_PER_KIND) {
      this.refuse(`${c.file}|${c.id}`, {
        file: c.file,
        path: c.mappedPath,
        reason: `over the cap of ${MAX_FILES_PER_KIND} ${c.file} files per node`,
      });
      return false;
    }
    this.refused.delete(`${c.file}|${c.id}`);
    this.byId.set(c.id, {
      file: c.file,
      id: c.id,
      mappedPath: c.mappedPath,
      path: c.path,
      source: 'discovered',
      pids: [c.pid],
      processes: 1,
      since: Date.now(),
    });
    return true;
  }

  /** Kinds that gained a file from this process's maps. */
  private readMaps(pid: number): string[] {
    let text: string;
    try {
      text = readFileSync(join(this.procRoot, String(pid), 'maps'), 'utf8');
    } catch {
      return [];
    }
    const changed: string[] = [];
    const seen = new Set<string>();
    for (const line of text.split('\n')) {
      // address perms offset dev inode path
      const m = /^\S+ \S+ \S+ ([0-9a-f]+:[0-9a-f]+) (\d+)\s+(\/.*)$/.exec(line);
      if (!m || m[2] === '0') continue;
      const [, dev, inode, mapped] = m;
      const [major, minor] = dev.split(':').map((x) => parseInt(x, 16));
      const id = `${major}:${minor}:${inode}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const deleted = mapped.endsWith(' (deleted)');
      const base = basename(deleted ? mapped.slice(0, -' (deleted)'.length) : mapped);
      const kind = this.opts.kinds.find((k) => k.matches(base));
      if (!kind) continue;
      const have = this.byId.get(id);
      if (have) {
        if (!have.pids.includes(pid)) {
          have.processes++;
          if (have.pids.length < PIDS_SHOWN) have.pids.push(pid);
        }
        continue;
      }
      if (deleted) {
        this.refuse(`${kind.file}|${id}`, {
          file: kind.file,
          path: mapped,
          reason: `deleted since pid ${pid} mapped it (replaced on disk)`,
        });
        continue;
      }
      const unsafe = unsafePathReason(mapped);
      if (unsafe) {
        this.refuse(`${kind.file}|${id}`, { file: kind.file, path: mapped.slice(0, 300), reason: unsafe });
        continue;
      }
      if (this.unusable.get(id) !== undefined) continue;
      // Without a symbol check the cap applies now; with one, only once the file proved usable (checkPending).
      if (!this.opts.usable && this.countOf(kind.file) >= MAX_FILES_PER_KIND) {
        this.refuse(`${kind.file}|${id}`, {
          file: kind.file,
          path: mapped,
          reason: `over the cap of ${MAX_FILES_PER_KIND} ${kind.file} files per node`,
        });
        continue;
      }
      const path = this.reach(pid, mapped);
      if (!path) {
        this.refuse(`${kind.file}|${id}`, {
          file: kind.file,
          path: mapped,
          reason: `not reachable through ${this.procRoot}/${pid}/root (needs CAP_SYS_PTRACE)`,
        });
        continue;
      }
      const candidate = { file: kind.file, id, mappedPath: mapped, path, pid };
      if (this.opts.usable) {
        if (this.pending.size >= MAX_PENDING && !this.pending.has(id)) {
          this.procs.delete(pid); // read its maps again at the next scan, when there is room
          continue;
        }
        this.pending.set(id, candidate);
        continue;
      }
      if (this.add(candidate)) changed.push(kind.file);
    }
    return changed;
  }

  /** The exporter's own path to the file when it is the same one, else through the process's root. */
  private reach(pid: number, mapped: string): string | undefined {
    const viaRoot = join(this.procRoot, String(pid), 'root', mapped);
    let inNs;
    try {
      inNs = statSync(viaRoot);
    } catch {
      return undefined;
    }
    try {
      const own = statSync(mapped);
      if (own.dev === inNs.dev && own.ino === inNs.ino) return mapped;
    } catch {
      /* not in our mount namespace */
    }
    return viaRoot;
  }

  private vsizeOf(pid: number): string | undefined {
    try {
      const stat = readFileSync(join(this.procRoot, String(pid), 'stat'), 'utf8');
      // Fields after the comm (which may hold spaces and parentheses): state is field 3, vsize field 23.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[20];
    } catch {
      return undefined;
    }
  }

  private cgroupOf(pid: number): string | undefined {
    try {
      return pickCgroupPath(readFileSync(join(this.procRoot, String(pid), 'cgroup'), 'utf8'))?.path;
    } catch {
      return undefined;
    }
  }

  /** A process in a pod's or a container's cgroup, other than the exporter's own container. */
  private isWorkload(pid: number): boolean {
    const path = this.cgroupOf(pid);
    if (!path || path === this.selfCgroup) return false;
    const info = parseCgroupPath(path);
    return Boolean(info.podUid || info.containerId);
  }

  health(): {
    scans: number;
    lastScanMs: number;
    scanMs: number;
    processesTracked: number;
    pendingChecks: number;
    refusedTotal: number;
  } {
    return {
      scans: this.scans,
      lastScanMs: this.lastScanMs,
      scanMs: this.opts.scanMs,
      processesTracked: this.procs.size,
      pendingChecks: this.pending.size,
      refusedTotal: this.refusedTotal,
    };
  }
}
