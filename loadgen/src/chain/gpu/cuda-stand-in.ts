/**
 * The stand-in CUDA driver (loadgen/native/): `libcuda.so.1` and the per-replica driver process `llm-cuda-driver`
 * linked against it, built with gcc on first use into `<repo>/.cache/native/` (or taken prebuilt from
 * `HOPSCOPE_NATIVE_DIR`, as the Docker image ships them). A build stamp (hash of the sources and flags) keeps an
 * up-to-date library in place: an eBPF exporter attaches its uprobes to that file, and replacing the file would
 * detach them. Where gcc is missing the answer says so, and the chain simulates GPU OOM without the kernel signal.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
export const NATIVE_SOURCES = join(REPO_ROOT, 'loadgen/native');
export const LIBRARY = 'libcuda.so.1';
export const DRIVER = 'llm-cuda-driver';

export interface CudaStandIn {
  library: string;
  driver: string;
}
export type StandInResult = ({ ok: true } & CudaStandIn) | { ok: false; reason: string };

/** Where the built files live: HOPSCOPE_NATIVE_DIR, else <repo>/.cache/native. */
export const nativeDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.HOPSCOPE_NATIVE_DIR || join(REPO_ROOT, '.cache/native');

const LIB_FLAGS = ['-shared', '-fPIC', '-O1', '-Wall'];
// $ORIGIN: the driver finds the stand-in beside itself, wherever the directory is.
const DRIVER_FLAGS = ['-O1', '-Wall', '-L.', '-l:libcuda.so.1', '-Wl,-rpath,$ORIGIN'];

function sourceHash(): string | undefined {
  const files = ['libcuda-stand-in.c', 'llm-cuda-driver.c'].map((f) => join(NATIVE_SOURCES, f));
  if (!files.every((f) => existsSync(f))) return undefined;
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(f));
  h.update(JSON.stringify([LIB_FLAGS, DRIVER_FLAGS]));
  return h.digest('hex').slice(0, 16);
}

const gccMissing = (): string | undefined => {
  try {
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'gcc is not installed (Debian packages gcc and libc6-dev)'
      : `gcc does not run: ${(err as Error).message}`;
  }
};

let cached: StandInResult | undefined;

/** The built stand-in, building it when missing or out of date (once per process). */
export function ensureCudaStandIn(env: NodeJS.ProcessEnv = process.env): StandInResult {
  if (cached) return cached;
  cached = build(env);
  return cached;
}

function build(env: NodeJS.ProcessEnv): StandInResult {
  if (process.platform !== 'linux')
    return { ok: false, reason: `the stand-in libcuda.so.1 is built for Linux (this is ${process.platform})` };
  const dir = nativeDir(env);
  const out: CudaStandIn = { library: join(dir, LIBRARY), driver: join(dir, DRIVER) };
  const stamp = join(dir, 'build.stamp');
  const hash = sourceHash();
  const built = existsSync(out.library) && existsSync(out.driver);
  if (built && (!hash || (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash)))
    return { ok: true, ...out };
  if (!hash) return { ok: false, reason: `no prebuilt stand-in in ${dir} and no sources in ${NATIVE_SOURCES}` };
  const missing = gccMissing();
  if (missing) return { ok: false, reason: missing };
  try {
    mkdirSync(dir, { recursive: true });
    // Built aside and renamed into place: a chain starting at the same time never sees half a file.
    const tmp = mkdtempSync(join(dir, '.build-'));
    try {
      execFileSync('gcc', [...LIB_FLAGS, '-o', join(tmp, LIBRARY), join(NATIVE_SOURCES, 'libcuda-stand-in.c')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      execFileSync('gcc', ['-o', join(tmp, DRIVER), join(NATIVE_SOURCES, 'llm-cuda-driver.c'), ...DRIVER_FLAGS], {
        cwd: tmp,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      renameSync(join(tmp, LIBRARY), out.library);
      renameSync(join(tmp, DRIVER), out.driver);
      writeFileSync(stamp, `${hash}\n`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return { ok: true, ...out };
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return { ok: false, reason: `gcc could not build the stand-in libcuda.so.1: ${stderr || (err as Error).message}` };
  }
}
