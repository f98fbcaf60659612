import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Attributor } from '../../../bpf-exporter/src/attribution/attributor';
import { BoundedCache } from '../../../bpf-exporter/src/attribution/bounded-cache';
import { parseCgroupPath, pickCgroupPath } from '../../../bpf-exporter/src/attribution/cgroup-path';
import { PidRegistry } from '../../../bpf-exporter/src/attribution/registry';

const CID = '3f1e2d4c5b6a79880123456789abcdef0123456789abcdef0123456789abcdef';
const UID = '1a2b3c4d-5e6f-7a8b-9c0d-112233445566';
const UID_ = UID.replace(/-/g, '_');

test('cgroup paths of every runtime and driver → runtime, container id, pod UID, QoS', () => {
  const cases: Array<[string, Record<string, string | undefined>]> = [
    [
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice/cri-containerd-${CID}.scope`,
      { runtime: 'containerd', containerId: CID, podUid: UID, qos: 'burstable', driver: 'systemd' },
    ],
    [
      `/kubepods.slice/kubepods-pod${UID_}.slice/cri-containerd-${CID}.scope`,
      { runtime: 'containerd', podUid: UID, qos: 'guaranteed' },
    ],
    [
      `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_}.slice/crio-${CID}.scope`,
      { runtime: 'cri-o', containerId: CID, podUid: UID, qos: 'besteffort' },
    ],
    [`/kubepods/besteffort/pod${UID}/crio-${CID}`, { runtime: 'cri-o', podUid: UID, driver: 'cgroupfs' }],
    [
      `/kubepods/burstable/pod${UID}/${CID}`,
      { runtime: 'cgroupfs', containerId: CID, podUid: UID, qos: 'burstable', driver: 'cgroupfs' },
    ],
    [`/kubepods/pod${UID}/${CID}`, { runtime: 'cgroupfs', podUid: UID, qos: 'guaranteed' }],
    [
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice/docker-${CID}.scope`,
      { runtime: 'docker', containerId: CID, podUid: UID },
    ],
    [`/docker/${CID}`, { runtime: 'docker', containerId: CID, podUid: undefined, driver: 'cgroupfs' }],
    [`/system.slice/docker-${CID}.scope`, { runtime: 'docker', containerId: CID, driver: 'systemd' }],
    [`/machine.slice/libpod-${CID}.scope`, { runtime: 'podman', containerId: CID }],
    [
      `/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod${UID_}.slice/cri-containerd-${CID}.scope`,
      { runtime: 'containerd', podUid: UID },
    ],
    ['/user.slice/user-1000.slice/session-2.scope', { runtime: undefined, containerId: undefined, podUid: undefined }],
    ['/', { runtime: undefined, podUid: undefined }],
  ];
  for (const [path, want] of cases) {
    const got = parseCgroupPath(path) as Record<string, string | undefined>;
    for (const [k, v] of Object.entries(want)) assert.equal(got[k], v, `${k} of ${path}`);
  }
});

test('/proc/<pid>/cgroup: v2 line unless root, else the telling v1 line', () => {
  const v2 = `0::/kubepods.slice/kubepods-pod${UID_}.slice/cri-containerd-${CID}.scope\n`;
  assert.deepEqual(pickCgroupPath(v2), {
    path: `/kubepods.slice/kubepods-pod${UID_}.slice/cri-containerd-${CID}.scope`,
    version: 2,
  });
  const v1 = `12:pids:/kubepods/burstable/pod${UID}/${CID}\n11:memory:/kubepods/burstable/pod${UID}/${CID}\n1:name=systemd:/kubepods/burstable/pod${UID}/${CID}\n0::/\n`;
  assert.equal(pickCgroupPath(v1)?.version, 1);
  assert.equal(parseCgroupPath(pickCgroupPath(v1)!.path).containerId, CID);
  const host = '9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n';
  assert.deepEqual(pickCgroupPath(host), { path: '/process_api/abc', version: 1 });
  assert.equal(pickCgroupPath(''), undefined);
});

test('attribution: registration first, then the container (pod name from HOSTNAME), then the cgroup id', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bx-attr-'));
  try {
    const proc = join(dir, 'proc');
    const cg2 = join(dir, 'cgroup');
    const podPath = `/kubepods.slice/kubepods-pod${UID_}.slice/cri-containerd-${CID}.scope`;
    mkdirSync(join(cg2, podPath), { recursive: true });
    writeFileSync(join(cg2, 'cgroup.procs'), '');
    mkdirSync(join(proc, '10'), { recursive: true });
    writeFileSync(join(proc, '10', 'cgroup'), `0::${podPath}\n`);
    writeFileSync(join(proc, '10', 'environ'), 'PATH=/bin\0HOSTNAME=rag-7d9f-x2\0POD_NAMESPACE=chain\0');
    const registry = new PidRegistry(2);
    const a = new Attributor({ node: 'n1', registry, procRoot: proc, cgroup2Root: cg2 });
    assert.deepEqual(
      { ...a.forPid(10), cgroupPath: undefined },
      {
        pod: 'rag-7d9f-x2',
        namespace: 'chain',
        node: 'n1',
        source: 'container',
        cgroupPath: undefined,
        container: { runtime: 'containerd', id: CID },
        podUid: UID,
      }
    );
    registry.set({ pid: 10, pod: 'declared', namespace: 'sim' });
    a.forget(10);
    assert.equal(a.forPid(10).pod, 'declared');
    assert.equal(a.forPid(10).source, 'registered');
    assert.equal(a.forPid(999).source, 'none', 'a gone process is unattributed, not guessed');
    // A socket event with only the cgroup id: the pod learnt from pid 10 (same cgroup) applies.
    const id = statSync(join(cg2, podPath)).ino;
    assert.equal(a.forCgroupId(id).pod, 'rag-7d9f-x2');
    const fresh = new Attributor({ node: 'n1', registry: new PidRegistry(), procRoot: proc, cgroup2Root: cg2 });
    assert.equal(fresh.cgroupPath(id), podPath);
    assert.equal(fresh.forCgroupId(id).podUid, UID);
    // Registry is bounded.
    registry.set({ pid: 11, pod: 'b' });
    registry.set({ pid: 12, pod: 'c' });
    assert.equal(registry.size, 2);
    assert.equal(registry.get(10), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bounded cache: capacity and TTL', () => {
  const c = new BoundedCache<number, string>(2, 100);
  c.set(1, 'a', 0);
  c.set(2, 'b', 0);
  c.set(3, 'c', 0);
  assert.equal(c.size, 2);
  assert.equal(c.get(1, 0), undefined);
  assert.equal(c.get(3, 50), 'c');
  assert.equal(c.get(3, 200), undefined);
});
