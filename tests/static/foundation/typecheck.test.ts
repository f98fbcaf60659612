/** The whole repo typechecks (strict), as `npm run typecheck` does. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');

it('tsc --noEmit over the whole repo reports no error', () => {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  // --incremental keeps what it learned in .cache/ (git-ignored): a rerun re-checks only what changed.
  const args = [
    tsc,
    '-p',
    'tsconfig.json',
    '--noEmit',
    '--pretty',
    'false',
    '--incremental',
    '--tsBuildInfoFile',
    '.cache/tsc/repo.tsbuildinfo',
  ];
  const res = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  const errors = `${res.stdout}${res.stderr}`.split('\n').filter((l) => /error TS\d+/.test(l));
  assert.equal(
    res.status,
    0,
    `tsc failed with ${errors.length} error(s):\n${errors.slice(0, 40).join('\n') || res.stdout + res.stderr}`
  );
});
