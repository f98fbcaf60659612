/**
 * pid / cgroup id → pod, namespace, node, workload labels in one place (Coroot's model):
 *   1. a registration (POST /register) for that pid;
 *   2. /proc/<pid>/cgroup → container runtime, container id, pod UID; then the pod UID → name, namespace, labels and
 *      owner from the Kubernetes API (kubernetes/pod-informer.ts) when the exporter watches it ("kubernetes"), else,
 *      off-cluster or before the informer knows the pod, the pod name from the container's HOSTNAME (Kubernetes sets
 *      it to the pod name) or POD_NAME/POD_NAMESPACE from the downward API ("container");
 *   3. for socket-owned events with no pid: the socket's cgroup v2 id → cgroup path (directory inode under the v2
 *      mount, resolved in user space) → the same parsing, plus what was learnt from pids in that cgroup.
 * Every cache is bounded.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BoundedCache } from './bounded-cache';
import { parseCgroupPath, pickCgroupPath, type CgroupInfo } from './cgroup-path';
import type { PodIdentity } from './kubernetes/pod-informer';
import type { PidRegistry } from './registry';

export interface Attribution {
  pod?: string;
  namespace?: string;
  node?: string;
  service?: string;
  /** The allow-listed workload labels. */
  labels?: Record<string, string>;
  owner?: { kind: string; name: string };
  workload?: { kind: string; name: string };
  source: 'registered' | 'kubernetes' | 'container' | 'cgroup' | 'none';
  cgroupPath?: string;
  container?: { runtime?: string; id?: string };
  podUid?: string;
}

/** Pod UID → identity (the Kubernetes informer). */
export interface PodDirectory {
  byUid(uid: string): PodIdentity | undefined;
}

export interface AttributorOptions {
  node: string;
  registry: PidRegistry;
  /** Where /proc lives (tests point it at a fixture tree). */
  procRoot?: string;
  /** The cgroup v2 mount (hybrid hosts: /sys/fs/cgroup/unified). */
  cgroup2Root?: string;
  cacheSize?: number;
  /** Kubernetes identities by pod UID; absent off-cluster. */
  pods?: PodDirectory;
}

function detectCgroup2Root(): string | undefined {
  for (const p of ['/sys/fs/cgroup/unified', '/sys/fs/cgroup']) {
    try {
      statSync(join(p, 'cgroup.procs'));
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export class Attributor {
  private readonly pidCache: BoundedCache<number, Attribution>;
  private readonly cgroupPaths: BoundedCache<number, string>;
  private readonly learnt: BoundedCache<number, Attribution>;
  private lastScan = 0;
  readonly procRoot: string;
  readonly cgroup2Root?: string;

  constructor(private readonly opts: AttributorOptions) {
    const n = opts.cacheSize ?? 4096;
    this.pidCache = new BoundedCache(n, 30_000);
    this.cgroupPaths = new BoundedCache(n * 4, 10 * 60_000);
    this.learnt = new BoundedCache(n, 10 * 60_000);
    this.procRoot = opts.procRoot ?? '/proc';
    this.cgroup2Root = opts.cgroup2Root ?? detectCgroup2Root();
  }

  /** Registration changes must show at once, not after the cache's TTL. */
  forget(pid: number): void {
    this.pidCache.delete(pid);
  }

  forPid(pid: number): Attribution {
    const node = this.opts.node;
    const reg = pid > 0 ? this.opts.registry.get(pid) : undefined;
    if (reg)
      return {
        pod: reg.pod,
        namespace: reg.namespace,
        node: reg.node ?? node,
        service: reg.service,
        labels: reg.labels,
        source: 'registered',
      };
    if (pid <= 0) return { node, source: 'none' };
    const cached = this.pidCache.get(pid);
    if (cached && !this.improvable(cached)) return cached;
    let a: Attribution = { node, source: 'none' };
    try {
      const picked = pickCgroupPath(readFileSync(join(this.procRoot, String(pid), 'cgroup'), 'utf8'));
      if (picked) {
        const info = parseCgroupPath(picked.path);
        a = this.fromInfo(info, picked.path);
        if (a.source !== 'kubernetes' && (info.containerId || info.podUid)) {
          const env = this.readEnv(pid);
          a.pod = env.POD_NAME ?? env.HOSTNAME ?? a.pod;
          a.namespace = env.POD_NAMESPACE ?? a.namespace;
          a.source = a.pod ? 'container' : 'cgroup';
        }
        if (picked.version === 2 && this.cgroup2Root) {
          try {
            this.learnt.set(statSync(join(this.cgroup2Root, picked.path)).ino, a);
          } catch {
            /* gone */
          }
        }
      }
    } catch {
      /* process gone: unattributed */
    }
    this.pidCache.set(pid, a);
    return a;
  }

  /** For events that carry the socket's cgroup id but no trustworthy pid. */
  forCgroupId(id: number): Attribution {
    const node = this.opts.node;
    if (!id || id === 1) return { node, source: 'none' };
    const learnt = this.learnt.get(id);
    if (learnt && !this.improvable(learnt)) return learnt;
    const path = this.cgroupPath(id);
    if (!path) return { node, source: 'none' };
    return this.fromInfo(parseCgroupPath(path), path);
  }

  /** cgroup v2 id (the directory's inode) → path relative to the v2 mount; rescans at most every 2 s on a miss. */
  cgroupPath(id: number): string | undefined {
    const hit = this.cgroupPaths.get(id);
    if (hit !== undefined) return hit;
    if (!this.cgroup2Root || Date.now() - this.lastScan < 2000) return undefined;
    this.lastScan = Date.now();
    const root = this.cgroup2Root;
    let budget = 20_000;
    const walk = (rel: string, depth: number): void => {
      if (budget-- <= 0 || depth > 16) return;
      let entries: import('node:fs').Dirent[];
      try {
        entries = readdirSync(join(root, rel), { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const child = `${rel}/${e.name}`;
        try {
          this.cgroupPaths.set(statSync(join(root, child)).ino, child);
        } catch {
          continue;
        }
        walk(child, depth + 1);
      }
    };
    walk('', 0);
    return this.cgroupPaths.get(id);
  }

  /** Attributed from /proc while the informer did not know the pod yet, and it does now. */
  private improvable(a: Attribution): boolean {
    return Boolean(a.podUid && a.source !== 'kubernetes' && this.opts.pods?.byUid(a.podUid));
  }

  private fromInfo(info: CgroupInfo, path: string): Attribution {
    const a: Attribution = {
      node: this.opts.node,
      source: info.containerId || info.podUid ? 'cgroup' : 'none',
      cgroupPath: path,
    };
    if (info.containerId) a.container = { runtime: info.runtime, id: info.containerId };
    if (info.podUid) {
      a.podUid = info.podUid;
      const p = this.opts.pods?.byUid(info.podUid);
      if (p) {
        Object.assign(a, { pod: p.name, namespace: p.namespace, source: 'kubernetes' });
        if (Object.keys(p.labels).length) a.labels = p.labels;
        if (p.owner) a.owner = p.owner;
        if (p.workload) a.workload = p.workload;
      }
    }
    return a;
  }

  private readEnv(pid: number): Record<string, string> {
    try {
      const out: Record<string, string> = {};
      for (const kv of readFileSync(join(this.procRoot, String(pid), 'environ'), 'utf8').split('\0')) {
        const i = kv.indexOf('=');
        const k = kv.slice(0, i);
        if (k === 'HOSTNAME' || k === 'POD_NAME' || k === 'POD_NAMESPACE') out[k] = kv.slice(i + 1);
      }
      return out;
    } catch {
      return {};
    }
  }
}
