/**
 * Builds a stand-in native pair — a shared library and the program linked against it (loadgen/native/*.c) — with gcc
 * on first use into `nativeDir()` (`<repo>/.cache/native`), or takes it prebuilt from `HOPSCOPE_NATIVE_DIR`, as the
 * Docker image ships them. A build stamp per pair (hash of its sources and flags) keeps an up-to-date library in
 * place: an eBPF exporter attaches its uprobes to that file, and replacing the file would detach them. Where gcc is
 * missing the answer says so. The CUDA driver (cuda-stand-in.ts) and NCCL (nccl-stand-in.ts) stand-ins are two such
 * pairs.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
export const NATIVE_SOURCES = join(REPO_ROOT, 'loadgen/native');

/** Where the built files live: HOPSCOPE_NATIVE_DIR, else <repo>/.cache/native. */
export const nativeDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.HOPSCOPE_NATIVE_DIR || join(REPO_ROOT, '.cache/native');

export interface NativePair {
  /** The library's file name (`libcuda.so.1`), as the program links it. */
  library: string;
  librarySource: string;
  /** The program's file name (`llm-cuda-driver`). */
  program: string;
  programSource: string;
  /** The build stamp's file name in the native dir, one per pair. */
  stamp: string;
}
export type NativeBuild = { ok: true; library: string; program: string } | { ok: false; reason: string };

const LIB_FLAGS = ['-shared', '-fPIC', '-O1', '-Wall'];
// $ORIGIN: the program finds the library beside itself, wherever the directory is.
const programFlags = (library: string): string[] => ['-O1', '-Wall', '-L.', `-l:${library}`, '-Wl,-rpath,$ORIGIN'];

function sourceHash(p: NativePair): string | undefined {
  const files = [p.librarySource, p.programSource].map((f) => join(NATIVE_SOURCES, f));
  if (!files.every((f) => existsSync(f))) return undefined;
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(f));
  h.update(JSON.stringify([LIB_FLAGS, programFlags(p.library)]));
  return h.digest('hex').slice(0, 16);
}

function gccMissing(): string | undefined {
  try {
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'gcc is not installed (Debian packages gcc and libc6-dev)'
      : `gcc does not run: ${(err as Error).message}`;
  }
}

/** The pair, built when missing or out of date. */
export function buildNativePair(p: NativePair, env: NodeJS.ProcessEnv = process.env): NativeBuild {
  if (process.platform !== 'linux')
    return { ok: false, reason: `the stand-in ${p.library} is built for Linux (this is ${process.platform})` };
  const dir = nativeDir(env);
  const out = { library: join(dir, p.library), program: join(dir, p.program) };
  const stamp = join(dir, p.stamp);
  const hash = sourceHash(p);
  const built = existsSync(out.library) && existsSync(out.program);
  if (built && (!hash || (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash)))
    return { ok: true, ...out };
  if (!hash) return { ok: false, reason: `no prebuilt ${p.library} in ${dir} and no sources in ${NATIVE_SOURCES}` };
  const missing = gccMissing();
  if (missing) return { ok: false, reason: missing };
  try {
    mkdirSync(dir, { recursive: true });
    // Built aside and renamed into place: a chain starting at the same time never sees half a file.
    const tmp = mkdtempSync(join(dir, '.build-'));
    try {
      execFileSync('gcc', [...LIB_FLAGS, '-o', join(tmp, p.library), join(NATIVE_SOURCES, p.librarySource)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      execFileSync(
        'gcc',
        ['-o', join(tmp, p.program), join(NATIVE_SOURCES, p.programSource), ...programFlags(p.library)],
        { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] }
      );
      renameSync(join(tmp, p.library), out.library);
      renameSync(join(tmp, p.program), out.program);
      writeFileSync(stamp, `${hash}\n`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return { ok: true, ...out };
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return { ok: false, reason: `gcc could not build the stand-in ${p.library}: ${stderr || (err as Error).message}` };
  }
}
