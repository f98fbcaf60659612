/**
 * Uprobe file discovery against what a pod can put in its own maps (issue 20, finding 7): 16 dummy `libssl.so.3`
 * files do not take the places of the real one (the symbol check comes before the per-kind cap), paths with
 * characters that could rewrite a bpftrace program are refused, and the refusals kept are bounded.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_FILES_PER_KIND, MAX_REFUSALS, UprobeFiles } from '../../../bpf-exporter/src/core/uprobe-files';
import { isLibssl3 } from '../../../bpf-exporter/src/probes/tls-handshake';

function mapsLine(file: string, mapped = file): string {
  const st = statSync(file);
  const dev = `${(Math.floor(st.dev / 256) % 4096).toString(16).padStart(2, '0')}:${(st.dev % 256).toString(16).padStart(2, '0')}`;
  return `7f0000000000-7f0000001000 r-xp 00000000 ${dev} ${st.ino}                    ${mapped}`;
}

describe('uprobe files: hostile maps', () => {
  let dir = '';
  let proc = '';
  const lib = (sub: string): string => {
    mkdirSync(join(dir, sub), { recursive: true });
    const p = join(dir, sub, 'libssl.so.3');
    writeFileSync(p, sub);
    return p;
  };
  const pid = (n: number, maps: string[]): void => {
    mkdirSync(join(proc, String(n)), { recursive: true });
    writeFileSync(join(proc, String(n), 'maps'), `${maps.join('\n')}\n`);
    writeFileSync(join(proc, String(n), 'cgroup'), '0::/user.slice/session-1.scope\n');
    writeFileSync(join(proc, String(n), 'stat'), `${n} (x) S 1 ${'0 '.repeat(18)}1000 0 0\n`);
    symlinkSync('/', join(proc, String(n), 'root'));
  };
  const files = (pids: number[], usable?: (f: string, p: string) => Promise<true | string>): UprobeFiles =>
    new UprobeFiles({
      kinds: [{ file: 'libssl', matches: isLibssl3 }],
      explicit: {},
      registered: () => pids,
      scanMs: 1000,
      selfPid: 1,
      procRoot: proc,
      usable,
    });
  /** Scans and waits until the symbol checks of what it found are done. */
  const settle = async (f: UprobeFiles): Promise<void> => {
    f.scan();
    for (let i = 0; i < 200 && (f.health().pendingChecks > 0 || (f as unknown as { checking: boolean }).checking); i++)
      await new Promise((r) => setTimeout(r, 5));
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), `hopscope-upf-hostile-${process.pid}-`));
    proc = join(dir, 'proc');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${MAX_FILES_PER_KIND} dummy libssl.so.3 files (no symbols) do not crowd out the real one`, async () => {
    const dummies = Array.from({ length: MAX_FILES_PER_KIND }, (_, i) => lib(`dummy${i}`));
    const real = lib('real');
    pid(20, [...dummies.map((d) => mapsLine(d)), mapsLine(real)]);
    const checked: string[] = [];
    const f = files([20], async (_file, path) => {
      checked.push(path);
      return path === real ? true : 'exports none of the symbol sets a probe needs';
    });
    await settle(f);
    assert.deepEqual(
      f.files('libssl').map((x) => x.path),
      [real],
      'the real library is attached, the dummies are not'
    );
    const refused = f.refusals('libssl');
    assert.equal(refused.length, MAX_FILES_PER_KIND);
    assert.ok(refused.every((r) => /exports none/.test(r.reason)));
    assert.equal(checked.length, MAX_FILES_PER_KIND + 1);
    // A rescan of an unchanged process checks nothing again.
    await settle(f);
    assert.equal(checked.length, MAX_FILES_PER_KIND + 1);
  });

  it('a path with characters outside the allow-list is refused, never a target', async () => {
    const evil = [join(dir, 'a b'), join(dir, 'x:SSL_free { system("id") }'), join(dir, 'q"q'), join(dir, 'star*')].map(
      (d) => {
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'libssl.so.3'), d);
        return join(d, 'libssl.so.3');
      }
    );
    pid(
      30,
      evil.map((e) => mapsLine(e))
    );
    const seen: string[] = [];
    const f = files([30], async (_f, p) => {
      seen.push(p);
      return true;
    });
    await settle(f);
    assert.deepEqual(f.files('libssl'), []);
    assert.deepEqual(seen, [], 'not even listed with bpftrace -l');
    const refused = f.refusals('libssl');
    assert.equal(refused.length, evil.length);
    assert.ok(
      refused.every((r) => /characters other than/.test(r.reason)),
      JSON.stringify(refused)
    );
  });

  it(`refusals kept are bounded (${MAX_REFUSALS}); the total is counted`, async () => {
    const many = Array.from({ length: MAX_REFUSALS * 2 }, (_, i) => lib(`many${i}`));
    pid(
      40,
      many.map((m) => mapsLine(m))
    );
    const f = files([40], async () => 'exports none');
    await settle(f);
    assert.equal(f.refusals('libssl').length, MAX_REFUSALS);
    assert.equal(f.health().refusedTotal, MAX_REFUSALS * 2);
  });
});
