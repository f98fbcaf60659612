/** Shared helpers of the deploy checks: repository paths, YAML loading, and which tools this machine has. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const root = join(import.meta.dirname, '..', '..', '..');
export const repo = (...p: string[]): string => join(root, ...p);
export const readText = (...p: string[]): string => readFileSync(repo(...p), 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = any;
export const readYaml = (...p: string[]): Doc => parse(readText(...p), { strict: true, uniqueKeys: true, merge: true });
export const readYamlDocs = (...p: string[]): Doc[] =>
  parseAllDocuments(readText(...p)).map((d) => {
    if (d.errors.length) throw new Error(`${p.join('/')}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS();
  }).filter((d) => d !== null);
export const readJson = (...p: string[]): Doc => JSON.parse(readText(...p));

/** The absolute path of a binary on PATH, or undefined. */
export function which(bin: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** An image reference is pinned when it names a version tag (digits) or a digest, never `latest` or nothing. */
export function isPinnedImage(ref: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(ref)) return true;
  const m = /^(?:[^/]+\/)*[^/:]+:([^:/]+)$/.exec(ref);
  if (!m) return false;
  const tag = m[1];
  return tag !== 'latest' && /^v?\d+(\.\d+){1,3}([-.][\w.-]+)?$/.test(tag);
}

export const exists = (...p: string[]): boolean => existsSync(repo(...p));

/** Every HOPSCOPE_* variable a part's source reads (`env.X`, `env['X']`, `process.env.X`, or a name in a table). */
export function envVarsReadBy(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string): void => {
    const full = repo(d);
    if (!existsSync(full)) return;
    for (const e of readdirSync(full, { withFileTypes: true })) {
      const rel = join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (/\.(ts|sh)$/.test(e.name)) for (const m of readText(rel).matchAll(/\bHOPSCOPE_[A-Z0-9_]+\b/g)) out.add(m[0]);
    }
  };
  walk(dir);
  return out;
}

/** The shared reference data (fixtures) sit beside the repository: ../shared/fixtures. */
export const fixtures = (...p: string[]): string => join(root, '..', 'shared', 'fixtures', ...p);

/** Which part's source reads the env of a service or container, by image name. */
export const PART_OF_IMAGE: Record<string, string> = {
  'hopscope/backend-proxy': 'backend-proxy',
  'hopscope/bpf-exporter': 'bpf-exporter',
  'hopscope/loadgen': 'loadgen',
};

export const packageJson = (): Doc => readJson('package.json');
