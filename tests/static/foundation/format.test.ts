/**
 * The code is formatted as .prettierrc says (`npx prettier --write .` fixes it): TypeScript and JavaScript files,
 * as git tracks them and .prettierignore leaves them (recorded fixtures and built output are not ours to format).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');

it('prettier --check finds every TypeScript and JavaScript file formatted', () => {
  const prettier = join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
  // --cache keeps what it checked in node_modules/.cache: a rerun reads only what changed.
  const res = spawnSync(
    process.execPath,
    [prettier, '--check', '--cache', '--log-level', 'warn', '**/*.{ts,tsx,js,mjs,cjs}'],
    { cwd: root, encoding: 'utf8' }
  );
  const files = `${res.stdout}${res.stderr}`
    .split('\n')
    .filter((l) => l.startsWith('[warn] ') && !/Code style issues/.test(l))
    .map((l) => l.slice(7));
  assert.equal(
    res.status,
    0,
    `${files.length} file(s) not formatted (npx prettier --write <file>):\n${files.slice(0, 40).join('\n') || res.stdout + res.stderr}`
  );
});
