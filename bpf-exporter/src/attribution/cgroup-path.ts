/**
 * cgroup path → container runtime, container id, pod UID and QoS class: one pattern per runtime and cgroup driver,
 * cgroup v1 and v2 (the paths are the same shape; v1 just has one per controller). Pure, unit-tested on sample paths.
 *   containerd, systemd driver: /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/cri-containerd-<id>.scope
 *   CRI-O, systemd driver:      …/kubepods-besteffort-pod<uid_>.slice/crio-<id>.scope  (cgroupfs: …/pod<uid>/crio-<id>)
 *   any runtime, cgroupfs:      /kubepods/burstable/pod<uid>/<id>
 *   docker:                     /docker/<id> or /system.slice/docker-<id>.scope;  podman: libpod-<id>.scope
 */
export type Runtime = 'containerd' | 'cri-o' | 'docker' | 'podman' | 'cgroupfs';

export interface CgroupInfo {
  runtime?: Runtime;
  containerId?: string;
  podUid?: string;
  qos?: 'guaranteed' | 'burstable' | 'besteffort';
  driver?: 'systemd' | 'cgroupfs';
}

const ID = '([0-9a-f]{64})';
const CONTAINER_PATTERNS: Array<[RegExp, Runtime, 'systemd' | 'cgroupfs' | undefined]> = [
  [new RegExp(`cri-containerd-${ID}\\.scope$`), 'containerd', 'systemd'],
  [new RegExp(`crio-(?:conmon-)?${ID}(?:\\.scope)?$`), 'cri-o', undefined],
  [new RegExp(`docker-${ID}\\.scope$`), 'docker', 'systemd'],
  [new RegExp(`/docker/${ID}$`), 'docker', 'cgroupfs'],
  [new RegExp(`libpod-(?:conmon-)?${ID}(?:\\.scope)?$`), 'podman', undefined],
  [new RegExp(`/pod[0-9a-f_-]{36}/${ID}$`), 'cgroupfs', 'cgroupfs'],
];
// systemd driver escapes '-' in the pod UID as '_'; cgroupfs keeps the dashes.
const POD_SYSTEMD =
  /kubepods(?:-(besteffort|burstable))?-pod([0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12})\.slice/;
const POD_CGROUPFS =
  /\/kubepods(?:\/(besteffort|burstable))?\/pod([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/|$)/;

export function parseCgroupPath(path: string): CgroupInfo {
  const info: CgroupInfo = {};
  for (const [re, runtime, driver] of CONTAINER_PATTERNS) {
    const m = re.exec(path);
    if (m) {
      info.runtime = runtime;
      info.containerId = m[1];
      if (driver) info.driver = driver;
      break;
    }
  }
  const sd = POD_SYSTEMD.exec(path);
  const fs = sd ? null : POD_CGROUPFS.exec(path);
  const pod = sd ?? fs;
  if (pod) {
    info.podUid = pod[2].replace(/_/g, '-');
    info.qos = (pod[1] as CgroupInfo['qos']) ?? 'guaranteed';
    info.driver = sd ? 'systemd' : 'cgroupfs';
  }
  return info;
}

/**
 * Picks the most telling path from /proc/<pid>/cgroup: the v2 line (`0::`) unless it is the root, else the v1 line
 * that names a container or pod, else the name=systemd, memory or first v1 path.
 */
export function pickCgroupPath(procCgroup: string): { path: string; version: 1 | 2 } | undefined {
  const lines = procCgroup
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [, controllers, ...rest] = l.split(':');
      return { hierarchy: l.split(':')[0], controllers, path: rest.join(':') };
    });
  const v2 = lines.find((l) => l.hierarchy === '0' && l.controllers === '');
  if (v2 && v2.path !== '/') return { path: v2.path, version: 2 };
  const v1 = lines.filter((l) => l.hierarchy !== '0');
  const telling = v1.find((l) => {
    const i = parseCgroupPath(l.path);
    return i.containerId || i.podUid;
  });
  const pick =
    telling ??
    v1.find((l) => l.controllers === 'name=systemd' && l.path !== '/') ??
    v1.find((l) => l.controllers.split(',').includes('memory')) ??
    v1.find((l) => l.path !== '/') ??
    v2 ??
    v1[0];
  return pick ? { path: pick.path, version: pick.hierarchy === '0' ? 2 : 1 } : undefined;
}
