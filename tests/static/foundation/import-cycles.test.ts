/**
 * No import circles in the shipped code (the proxy, the exporter, the chain and load generator, the app, the
 * contracts): a module that imports itself through others is loaded half-initialised by whichever side starts, and
 * says two things depend on each other that should not. Every relative import counts — `import type` and `export …
 * from` too, and dynamic `import()` — read with TypeScript's own import scanner (`ts.preProcessFile`, no parse) and
 * resolved as the bundler resolution does (`.ts`, `.tsx`, a folder's `index`). Break a circle by moving what both
 * sides need into a module of its own.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FOLDERS, importCircles, importGraph, root, sourceFiles } from '../../support/import-graph';

describe('import circles', () => {
  it('the finder reports a circle through type-only, re-export and index imports, and none without one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hopscope-cycles-'));
    try {
      mkdirSync(join(dir, 'lib'));
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './lib';\nexport const a = 1;\n");
      writeFileSync(join(dir, 'lib', 'index.ts'), "export * from './b';\n");
      writeFileSync(join(dir, 'lib', 'b.tsx'), "import { a } from '../a';\nexport type B = typeof a;\n");
      writeFileSync(join(dir, 'c.ts'), "import { a } from './a';\nimport 'zod';\nexport const c = a;\n");
      const files = sourceFiles(dir);
      const g = importGraph(files);
      assert.deepEqual(g.unresolved, []);
      assert.deepEqual(importCircles(g.edges, dir), ['a.ts > lib/index.ts > lib/b.tsx > a.ts']);
      writeFileSync(join(dir, 'lib', 'b.tsx'), 'export type B = number;\n');
      assert.deepEqual(importCircles(importGraph(files).edges, dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`none in ${FOLDERS.join(', ')}`, () => {
    const files = FOLDERS.flatMap((f) => sourceFiles(join(root, f)));
    assert.ok(files.length > 100, `only ${files.length} source files found`);
    const g = importGraph(files);
    // An import the resolver cannot follow would hide the circles through it.
    assert.deepEqual(g.unresolved, [], 'relative imports that name no file');
    const circles = importCircles(g.edges);
    assert.deepEqual(
      circles,
      [],
      `import circles (move what both sides need into a module of its own):\n  ${circles.join('\n  ')}`
    );
  });
});
