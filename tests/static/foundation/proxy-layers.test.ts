/**
 * The proxy's layers point one way (issue 22, item 5): the HTTP layer (`http/`, `routes/`) calls the services, never
 * the reverse — a service raises a domain error (`domain/errors.ts`) that the HTTP error handler maps to a status, and
 * takes a `domain/time-range.ts` TimeRange, not the request parser's; the storage (`db/`) knows nothing above it (the
 * runs list's columns and the heartbeat default live in `domain/runs.ts`, below both); `domain/` imports only itself.
 * Every relative import counts, type-only ones too (../../support/import-graph.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { importGraph, root, sourceFiles } from '../../support/import-graph';

/** A rule: files under `from` (a folder of the proxy's src) import nothing under any of `not`. */
interface LayerRule {
  from: string;
  not: string[];
  why: string;
}

const HTTP = ['http', 'routes'];
const ABOVE_STORAGE = [
  'runs',
  'services',
  'drilldown',
  'evidence',
  'alerts',
  'rca',
  'routes',
  'http',
  'app.ts',
  'server.ts',
];
const BELOW_HTTP = [
  'services',
  'drilldown',
  'evidence',
  'runs',
  'alerts',
  'rca',
  'store',
  'sources',
  'otlp',
  'db',
  'domain',
];

export const RULES: LayerRule[] = [
  ...BELOW_HTTP.map((from) => ({
    from,
    not: HTTP,
    why: 'raise a domain error (domain/errors.ts) the HTTP layer maps; shared types go to domain/',
  })),
  { from: 'db', not: ABOVE_STORAGE, why: 'storage knows nothing above it: move what both need into domain/' },
  {
    from: 'domain',
    not: ['http', 'routes', 'services', 'db', 'runs', 'drilldown', 'evidence', 'alerts', 'store', 'sources', 'otlp'],
    why: 'the domain is the bottom layer',
  },
];

/** Under `dir` (a file or a folder, relative to `base`). */
const under = (file: string, base: string, dir: string): boolean => {
  const rel = relative(base, file);
  return rel === dir || rel.startsWith(dir + sep);
};

/** `a → b (why)` for every import that breaks a rule; paths relative to `base`. */
export function layerViolations(edges: Map<string, string[]>, base: string, rules: LayerRule[]): string[] {
  const out: string[] = [];
  for (const [file, deps] of edges) {
    for (const rule of rules) {
      if (!under(file, base, rule.from)) continue;
      for (const d of deps) {
        const bad = rule.not.find((n) => under(d, base, n));
        if (bad)
          out.push(
            `${relative(base, file)} → ${relative(base, d)} (${rule.from}/ must not import ${bad}: ${rule.why})`
          );
      }
    }
  }
  return out.sort();
}

describe('proxy layers', () => {
  it('the checker reports a service that imports the HTTP layer and a database that imports a service', () => {
    const dir = mkdtempSync(join(tmpdir(), `hopscope-layers-${process.pid}-`));
    try {
      for (const d of ['http', 'services', 'db', 'domain']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'http', 'errors.ts'), 'export class HttpError extends Error {}\n');
      writeFileSync(join(dir, 'domain', 'errors.ts'), 'export class DomainError extends Error {}\n');
      writeFileSync(
        join(dir, 'services', 'a.ts'),
        "import type { HttpError } from '../http/errors';\nexport type A = HttpError;\n"
      );
      writeFileSync(join(dir, 'db', 'repo.ts'), "import type { A } from '../services/a';\nexport type R = A;\n");
      writeFileSync(
        join(dir, 'services', 'b.ts'),
        "import { DomainError } from '../domain/errors';\nexport const b = DomainError;\n"
      );
      const files = sourceFiles(dir);
      const g = importGraph(files);
      assert.deepEqual(g.unresolved, []);
      assert.deepEqual(
        layerViolations(g.edges, dir, RULES).map((v) => v.split(' (')[0]),
        ['db/repo.ts → services/a.ts', 'services/a.ts → http/errors.ts']
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('none in backend-proxy/src', () => {
    const base = join(root, 'backend-proxy', 'src');
    const files = sourceFiles(base);
    assert.ok(files.length > 100, `only ${files.length} source files found`);
    const g = importGraph(files);
    assert.deepEqual(g.unresolved, [], 'relative imports that name no file');
    const bad = layerViolations(g.edges, base, RULES);
    assert.deepEqual(bad, [], `imports against the layers:\n  ${bad.join('\n  ')}`);
  });
});
