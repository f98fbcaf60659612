/**
 * Scenario files (YAML or JSON, `contract/scenario.ts`): found by name in the scenarios folder or by path, parsed with
 * the `yaml` package (JSON is YAML) so that every zod issue can be shown at its line and column in the file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { formatZodIssue } from '../../../contract/zod-error';
import { Scenario } from '../../../contract/scenario';
import { UsageError } from './errors';

export interface LoadedScenario {
  name: string;
  /** Absolute path of the file. */
  file: string;
  scenario: Scenario;
}

const EXTENSIONS = ['.yaml', '.yml', '.json'];
/** How many issues one error message lists. */
const MAX_ISSUES = 10;

/**
 * Where named scenarios live: `$HOPSCOPE_SCENARIOS_DIR`, the repository's loadgen/scenarios, or `scenarios/` beside a
 * bundled CLI (the container image).
 */
export function scenarioDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = [join(import.meta.dirname, '..', '..', 'scenarios'), join(import.meta.dirname, 'scenarios')];
  if (env.HOPSCOPE_SCENARIOS_DIR) dirs.unshift(resolve(env.HOPSCOPE_SCENARIOS_DIR));
  return dirs.filter((d) => existsSync(d) && statSync(d).isDirectory());
}

/** Names of the scenarios found in the scenario folders (first folder wins). */
export function listScenarios(env: NodeJS.ProcessEnv = process.env): string[] {
  const names = new Set<string>();
  for (const d of scenarioDirs(env)) {
    for (const f of readdirSync(d)) if (EXTENSIONS.includes(extname(f))) names.add(basename(f, extname(f)));
  }
  return [...names].sort();
}

/** A file path (anything with a `/` or a known extension), else a name in the scenario folders. */
export function findScenario(ref: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const looksLikePath = ref.includes('/') || ref.includes('\\') || EXTENSIONS.includes(extname(ref));
  if (looksLikePath) {
    const file = isAbsolute(ref) ? ref : resolve(cwd, ref);
    if (!existsSync(file)) throw new UsageError(`scenario file ${ref} not found`);
    return file;
  }
  for (const d of scenarioDirs(env)) {
    for (const ext of EXTENSIONS) if (existsSync(join(d, ref + ext))) return join(d, ref + ext);
  }
  const known = listScenarios(env);
  throw new UsageError(
    `unknown scenario ${JSON.stringify(ref)}; available: ${known.join(', ') || '(none found)'}; or give a file path`
  );
}

interface Located {
  line: number;
  col: number;
}

/** The node a zod issue path points at (its key for an unknown field), or the deepest one found on the way. */
function locate(doc: Document.Parsed, lc: LineCounter, path: readonly PropertyKey[], keyOfLast: boolean): Located {
  let node: unknown = doc.contents;
  let at: [number, number, number] | null | undefined = (node as { range?: [number, number, number] } | null)?.range;
  let parentKey: [number, number, number] | null | undefined;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      // A missing field: the key of the object that lacks it says where.
      if (!pair) {
        at = parentKey ?? at;
        break;
      }
      parentKey = (pair.key as { range?: [number, number, number] }).range;
      const key = pair.key as { range?: [number, number, number] };
      const value = pair.value as { range?: [number, number, number] } | null;
      at = keyOfLast && i === path.length - 1 ? key.range : (value?.range ?? key.range);
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg]) {
      node = node.items[seg];
      at = (node as { range?: [number, number, number] }).range ?? at;
    } else break;
  }
  const pos = lc.linePos(at?.[0] ?? 0);
  return { line: pos.line || 1, col: pos.col || 1 };
}

/** `file:line:col: path: message`, one line per issue. */
function formatIssues(file: string, issues: z.core.$ZodIssue[], doc?: Document.Parsed, lc?: LineCounter): string {
  const lines: string[] = [];
  for (const issue of issues) {
    // An unknown field is reported at that field, by name.
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    for (const key of unknownKeys) {
      const path = key === undefined ? issue.path : [...issue.path, key];
      const message = key === undefined ? issue.message : `unknown field ${JSON.stringify(key)}`;
      const where = doc && lc ? locate(doc, lc, path, key !== undefined) : undefined;
      lines.push(`${file}${where ? `:${where.line}:${where.col}` : ''}: ${formatZodIssue({ path, message })}`);
    }
  }
  const shown = lines.slice(0, MAX_ISSUES);
  if (lines.length > shown.length) shown.push(`… and ${lines.length - shown.length} more`);
  return shown.join('\n');
}

/** Parses and validates a scenario's text; every problem is reported at its line in `file`. */
export function parseScenario(text: string, file: string): Scenario {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    const msgs = doc.errors.slice(0, MAX_ISSUES).map((e) => {
      const p = lc.linePos(e.pos[0]);
      return `${file}:${p.line || 1}:${p.col || 1}: ${e.message.split('\n')[0]}`;
    });
    throw new UsageError(
      `bad scenario ${file} (not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}):\n  ${msgs.join('\n  ')}`
    );
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 100 });
  if (raw === null || raw === undefined) throw new UsageError(`bad scenario ${file}: the file is empty`);
  const r = Scenario.safeParse(raw);
  if (!r.success)
    throw new UsageError(
      `bad scenario ${file}:\n  ${formatIssues(file, r.error.issues, doc, lc).split('\n').join('\n  ')}`
    );
  return r.data;
}

/** Validates a scenario again after the command line changed it (issues named by field; no file line applies). */
export function revalidate(s: Scenario, what: string): Scenario {
  const r = Scenario.safeParse(s);
  if (!r.success)
    throw new UsageError(`${what}:\n  ${formatIssues('scenario', r.error.issues).split('\n').join('\n  ')}`);
  return r.data;
}

/** Finds, reads and validates a scenario; its name defaults to the file's. */
export function loadScenario(ref: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedScenario {
  const file = findScenario(ref, env, cwd);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read scenario ${file}: ${(err as Error).message}`);
  }
  const scenario = parseScenario(text, file);
  const name = scenario.name ?? basename(file, extname(file));
  return { name, file, scenario: { ...scenario, name } };
}

/** A path inside a scenario (a dataset) is relative to the scenario's own folder. */
export function scenarioRelative(
  loaded: Pick<LoadedScenario, 'file'> | undefined,
  path: string,
  cwd = process.cwd()
): string {
  if (isAbsolute(path)) return path;
  return resolve(loaded ? dirname(loaded.file) : cwd, path);
}
