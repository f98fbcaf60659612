/** ESLint over the whole repo (eslint.config.js) with zero warnings, as `npm run lint` does. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');

it('eslint reports no error and no warning', () => {
  const eslint = join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');
  // The cache (keyed by file content and config) keeps repeated runs fast; it never hides a problem.
  const res = spawnSync(
    process.execPath,
    [eslint, '--max-warnings', '0', '--cache', '--cache-location', '.cache/eslint/', '--format', 'stylish', '.'],
    {
      cwd: root,
      encoding: 'utf8',
    }
  );
  assert.equal(res.status, 0, `eslint found problems:\n${(res.stdout + res.stderr).slice(0, 8000)}`);
});
