/** Shared helpers of the deploy checks: repository paths, YAML loading, and which tools this machine has. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export const root = join(import.meta.dirname, '..', '..', '..');
export const repo = (...p: string[]): string => join(root, ...p);
export const readText = (...p: string[]): string => readFileSync(repo(...p), 'utf8');
export type Doc = any;
export const readYaml = (...p: string[]): Doc => parse(readText(...p), { strict: true, uniqueKeys: true, merge: true });
export const readYamlDocs = (...p: string[]): Doc[] =>
  parseAllDocuments(readText(...p))
    .map((d) => {
      if (d.errors.length) throw new Error(`${p.join('/')}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS();
    })
    .filter((d) => d !== null);
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
export function envVarsReadBy(dir: string, names: RegExp = /\bHOPSCOPE_[A-Z0-9_]+\b/g): Set<string> {
  const out = new Set<string>();
  const walk = (d: string): void => {
    const full = repo(d);
    if (!existsSync(full)) return;
    for (const e of readdirSync(full, { withFileTypes: true })) {
      const rel = join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (/\.(ts|sh)$/.test(e.name)) for (const m of readText(rel).matchAll(names)) out.add(m[0]);
    }
  };
  walk(dir);
  return out;
}

/**
 * The variables a part's code reads that a deployment may hand it: its HOPSCOPE_* ones and the standard OTEL_* ones
 * it reads itself (e.g. the load generator's OTEL_EXPORTER_OTLP_ENDPOINT).
 */
export const envHandedVarsReadBy = (dir: string): Set<string> =>
  envVarsReadBy(dir, /\b(?:HOPSCOPE|OTEL)_[A-Z0-9_]+\b/g);

/** The shared reference data (fixtures) sit beside the repository: ../shared/fixtures. */
export { fixture as fixtures } from '../../support/fixtures';

/** Which part's source reads the env of a service or container, by image name. */
export const PART_OF_IMAGE: Record<string, string> = {
  'hopscope/backend-proxy': 'backend-proxy',
  'hopscope/bpf-exporter': 'bpf-exporter',
  'hopscope/loadgen': 'loadgen',
};

export const packageJson = (): Doc => readJson('package.json');

/**
 * Each part's own configuration loader, run on a given environment: throws the part's own error for a value it
 * refuses. So the values docker-compose and the manifests hand over are checked by the rules the parts apply.
 */
export async function loadPartConfig(part: string, env: Record<string, string>): Promise<unknown> {
  const clean = { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv;
  if (part === 'backend-proxy') return (await import('../../../backend-proxy/src/config')).loadConfig({}, clean);
  if (part === 'bpf-exporter') return (await import('../../../bpf-exporter/src/config')).loadConfig(clean);
  if (part === 'loadgen') return (await import('../../../loadgen/src/config')).loadChainConfig({}, clean);
  throw new Error(`no config loader for ${part}`);
}

/** Compose interpolation of `${VAR:?msg}` (given a sample value) and `${VAR:-default}`. */
export function interpolate(value: string, samples: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    if (samples[name] !== undefined) return samples[name];
    if (op === '-') return arg ?? '';
    throw new Error(`\${${name}} has no default and no sample value`);
  });
}

/** Per part: the variable of its bind address and those of the ports it listens on (config modules). */
export const LISTEN_VARS: Record<string, { host: string; ports: string[] }> = {
  'backend-proxy': { host: 'HOPSCOPE_PROXY_HOST', ports: ['HOPSCOPE_PROXY_PORT'] },
  'bpf-exporter': { host: 'HOPSCOPE_BPF_HOST', ports: ['HOPSCOPE_BPF_PORT'] },
  loadgen: { host: 'HOPSCOPE_CHAIN_HOST', ports: ['HOPSCOPE_GATEWAY_PORT', 'HOPSCOPE_CONTROL_PORT'] },
};
