/**
 * The shipped code's relative imports as a graph, read with TypeScript's own import scanner (`ts.preProcessFile`, no
 * parse) and resolved as the bundler resolution does (`.ts`, `.tsx`, a folder's `index`): every relative import counts,
 * `import type` and `export … from` too, and dynamic `import()`. The import-circles and layers tests read it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export const root = resolve(import.meta.dirname, '..', '..');
export const FOLDERS = ['backend-proxy', 'bpf-exporter', 'loadgen', 'src', 'contract'];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'artifacts', '.cache']);
const SOURCE = /\.tsx?$/;
const RESOLVE_SUFFIXES = ['', '.ts', '.tsx', '.d.ts', '/index.ts', '/index.tsx'];

export function sourceFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) sourceFiles(join(dir, e.name), out);
    } else if (SOURCE.test(e.name)) out.push(join(dir, e.name));
  }
  return out;
}

const isFile = (p: string): boolean => existsSync(p) && statSync(p).isFile();

/** The file a relative specifier names, or undefined; a `.js` specifier may name its `.ts` source. */
function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const s of RESOLVE_SUFFIXES) if (isFile(base + s)) return base + s;
  const source = base.replace(/\.(m|c)?js$/, '.$1ts').replace(/\.jsx$/, '.tsx');
  return source !== base && isFile(source) ? source : undefined;
}

export interface ImportGraph {
  edges: Map<string, string[]>;
  /** `file: specifier` of relative imports that name no file. */
  unresolved: string[];
}

/** Every file's relative imports, resolved; imports of packages are not followed. */
export function importGraph(files: string[]): ImportGraph {
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const f of files) {
    const deps: string[] = [];
    for (const { fileName } of ts.preProcessFile(readFileSync(f, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = resolveImport(f, fileName);
      if (to === undefined) unresolved.push(`${relative(root, f)}: ${fileName}`);
      else if (SOURCE.test(to)) deps.push(to);
    }
    edges.set(f, [...new Set(deps)]);
  }
  return { edges, unresolved };
}

/**
 * Per strongly connected component (Tarjan, iterative): its shortest circle through one file, `a > b > c > a`, and the
 * component's other files; paths relative to `base`.
 */
export function importCircles(edges: Map<string, string[]>, base = root): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const inGraph = (n: string): boolean => edges.has(n);
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next);
    next++;
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const deps = (edges.get(top.node) ?? []).filter(inGraph);
      if (top.i < deps.length) {
        const d = deps[top.i++];
        if (!index.has(d)) {
          index.set(d, next);
          low.set(d, next);
          next++;
          stack.push(d);
          onStack.add(d);
          work.push({ node: d, i: 0 });
        } else if (onStack.has(d)) low.set(top.node, Math.min(low.get(top.node)!, index.get(d)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const p = work[work.length - 1].node;
        low.set(p, Math.min(low.get(p)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          comp.push(n);
        } while (n !== top.node);
        if (comp.length > 1 || (edges.get(top.node) ?? []).includes(top.node)) components.push(comp);
      }
    }
  }
  return components.map((comp) => {
    const circle = circleIn(comp, edges);
    const rest = comp
      .filter((f) => !circle.includes(f))
      .map((f) => relative(base, f))
      .sort();
    const text = circle.map((f) => relative(base, f)).join(' > ');
    return rest.length ? `${text} (and, in circles with these, ${rest.join(', ')})` : text;
  });
}

/** The shortest circle through the component's first file (in path order), found breadth-first inside it. */
function circleIn(comp: string[], edges: Map<string, string[]>): string[] {
  const members = new Set(comp);
  const start = [...comp].sort()[0];
  const prev = new Map<string, string>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    for (const d of edges.get(queue[q]) ?? []) {
      if (!members.has(d)) continue;
      if (d === start) {
        const path = [start];
        for (let n = queue[q]; n !== start; n = prev.get(n)!) path.splice(1, 0, n);
        return [...path, start];
      }
      if (!prev.has(d)) {
        prev.set(d, queue[q]);
        queue.push(d);
      }
    }
  }
  return [...comp, comp[0]];
}
