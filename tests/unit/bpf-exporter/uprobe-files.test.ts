/**
 * Discovery of the files the workloads map, on a /proc tree laid out as the kernel does (maps, stat, cgroup, root):
 * which processes count (registered, pod or container cgroups; never the exporter's own), one file per device and
 * inode (an explicit file and a process's mapping of it are one), a container's file reached through its root, maps
 * read again only when the address space changed, and refusals with their reason.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { UprobeFiles } from '../../../bpf-exporter/src/core/uprobe-files';
import { isLibcuda } from '../../../bpf-exporter/src/probes/gpu-alloc-fail';

const POD_CGROUP =
  '0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_112233445566.slice/cri-containerd-' +
  'c'.repeat(64) +
  '.scope\n';

/** A maps line for `file` (its real device and inode), as /proc/<pid>/maps prints it. */
function mapsLine(file: string, mapped = file): string {
  const st = statSync(file);
  const dev = `${(Math.floor(st.dev / 256) % 4096).toString(16).padStart(2, '0')}:${(st.dev % 256).toString(16).padStart(2, '0')}`;
  return `7f0000000000-7f0000001000 r-xp 00000000 ${dev} ${st.ino}                    ${mapped}`;
}

test('uprobe files: workloads only, one file per inode, container files through their root, rescans only on change', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bx-upf-'));
  try {
    const lib = (name: string): string => {
      const p = join(dir, name);
      writeFileSync(p, name);
      return p;
    };
    const explicit = lib('libcuda.so.1');
    const podLib = lib('libcuda.so.535.104.05');
    const hostOnly = lib('libcuda.so.2');
    mkdirSync(join(dir, 'ctr', 'usr', 'lib'), { recursive: true });
    writeFileSync(join(dir, 'ctr', 'usr', 'lib', 'libcuda.so.1'), 'in the container');
    const proc = join(dir, 'proc');
    const pid = (n: number, o: { maps: string[]; cgroup?: string; vsize?: number; root?: string }): void => {
      mkdirSync(join(proc, String(n)), { recursive: true });
      writeFileSync(join(proc, String(n), 'maps'), `${o.maps.join('\n')}\n`);
      writeFileSync(join(proc, String(n), 'cgroup'), o.cgroup ?? '0::/user.slice/session-1.scope\n');
      // comm with a space and a parenthesis: fields are counted after the last ')'.
      writeFileSync(join(proc, String(n), 'stat'), `${n} (a b) c) S 1 ${'0 '.repeat(18)}${o.vsize ?? 1000} 0 0\n`);
      try {
        symlinkSync(o.root ?? '/', join(proc, String(n), 'root'));
      } catch {
        /* exists */
      }
    };
    pid(10, { maps: [mapsLine(explicit)] }); // registered, maps the explicit file
    pid(11, { maps: [mapsLine(podLib), mapsLine(explicit)], cgroup: POD_CGROUP });
    pid(12, { maps: [mapsLine(hostOnly)] }); // neither registered nor in a pod: ignored
    pid(13, {
      maps: [mapsLine(join(dir, 'ctr', 'usr', 'lib', 'libcuda.so.1'), '/usr/lib/libcuda.so.1')],
      cgroup: POD_CGROUP,
      root: join(dir, 'ctr'),
    });
    pid(14, {
      maps: [
        mapsLine(podLib)
          .replace(/ +\S+$/, '    /gone/libcuda.so.1 (deleted)')
          .replace(/ \d+ +\//, ' 999999 /'),
      ],
      cgroup: POD_CGROUP,
    });
    // The exporter itself, and another process of its own container: never looked at.
    const OWN = POD_CGROUP.replace(/c{64}/, 'e'.repeat(64));
    pid(99, { maps: [mapsLine(hostOnly)], cgroup: OWN });
    pid(98, { maps: [mapsLine(hostOnly)], cgroup: OWN });
    const registered = new Set([10]);
    const f = new UprobeFiles({
      kinds: [{ file: 'libcuda', matches: isLibcuda }],
      explicit: { libcuda: [explicit, join(dir, 'nope.so')] },
      registered: () => registered,
      scanMs: 1000,
      selfPid: 99,
      procRoot: proc,
    });
    const changes: string[][] = [];
    f.on('change', (k: string[]) => changes.push(k));
    f.scan();
    const files = f.files('libcuda');
    assert.deepEqual(
      files.map((x) => [x.path, x.source]),
      [
        [explicit, 'explicit'],
        [podLib, 'discovered'],
        [join(proc, '13', 'root', 'usr', 'lib', 'libcuda.so.1'), 'discovered'],
      ],
      "explicit first; pid 12 (not a workload), 99 and 98 (the exporter's container) ignored; the container copy through its root"
    );
    assert.equal(files.find((x) => x.path === podLib)!.processes, 1);
    assert.equal(files[2].mappedPath, '/usr/lib/libcuda.so.1');
    assert.deepEqual(changes, [['libcuda']]);
    const refused = f.refusals('libcuda');
    assert.ok(refused.some((r) => r.path === join(dir, 'nope.so') && /configured file not found/.test(r.reason)));
    assert.ok(refused.some((r) => /deleted/.test(r.reason)));
    // pid 12 registers: its file is found at the next scan.
    registered.add(12);
    f.scan();
    assert.ok(f.files('libcuda').some((x) => x.path === hostOnly));
    assert.equal(changes.length, 2);
    // A process that maps a new file without its address space changing size is not read again...
    const other = lib('libcuda.so.3');
    pid(11, { maps: [mapsLine(podLib), mapsLine(other)], cgroup: POD_CGROUP });
    f.scan();
    assert.ok(!f.files('libcuda').some((x) => x.path === other));
    // ...and is once it has.
    pid(11, { maps: [mapsLine(podLib), mapsLine(other)], cgroup: POD_CGROUP, vsize: 2000 });
    f.scan();
    assert.ok(f.files('libcuda').some((x) => x.path === other));
    // The container process is gone: its file can no longer be reached and is dropped (found again if mapped again).
    rmSync(join(proc, '13'), { recursive: true });
    assert.ok(!f.files('libcuda').some((x) => x.mappedPath === '/usr/lib/libcuda.so.1'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
