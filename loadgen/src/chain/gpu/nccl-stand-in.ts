/**
 * The stand-in NCCL library (loadgen/native/libnccl-stand-in.c → `libnccl.so.2`) and the per-rank process
 * `llm-nccl-rank` linked against it, built with gcc on first use beside the stand-in CUDA driver (`nativeDir()`), or
 * taken prebuilt from `HOPSCOPE_NATIVE_DIR`. Its own build stamp (hash of its sources and flags) keeps an up-to-date
 * library in place: an eBPF exporter's uprobes are attached to that file, and replacing it would detach them. The
 * build follows cuda-stand-in.ts (copied, not shared: that module builds the CUDA pair only). Where gcc is missing
 * the answer says so, and tensor-parallel groups run their collectives without the kernel signal.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NATIVE_SOURCES, nativeDir } from './cuda-stand-in';

export const NCCL_LIBRARY = 'libnccl.so.2';
export const NCCL_RANK = 'llm-nccl-rank';
const SOURCES = ['libnccl-stand-in.c', 'llm-nccl-rank.c'];

export interface NcclStandIn {
  library: string;
  rank: string;
}
export type NcclStandInResult = ({ ok: true } & NcclStandIn) | { ok: false; reason: string };

const LIB_FLAGS = ['-shared', '-fPIC', '-O1', '-Wall'];
// $ORIGIN: the rank process finds the stand-in beside itself, wherever the directory is.
const RANK_FLAGS = ['-O1', '-Wall', '-L.', `-l:${NCCL_LIBRARY}`, '-Wl,-rpath,$ORIGIN'];

function sourceHash(): string | undefined {
  const files = SOURCES.map((f) => join(NATIVE_SOURCES, f));
  if (!files.every((f) => existsSync(f))) return undefined;
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(f));
  h.update(JSON.stringify([LIB_FLAGS, RANK_FLAGS]));
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

let cached: NcclStandInResult | undefined;

/** The built stand-in, building it when missing or out of date (once per process). */
export function ensureNcclStandIn(env: NodeJS.ProcessEnv = process.env): NcclStandInResult {
  cached ??= build(env);
  return cached;
}

function build(env: NodeJS.ProcessEnv): NcclStandInResult {
  if (process.platform !== 'linux')
    return { ok: false, reason: `the stand-in ${NCCL_LIBRARY} is built for Linux (this is ${process.platform})` };
  const dir = nativeDir(env);
  const out: NcclStandIn = { library: join(dir, NCCL_LIBRARY), rank: join(dir, NCCL_RANK) };
  const stamp = join(dir, 'nccl-build.stamp');
  const hash = sourceHash();
  const built = existsSync(out.library) && existsSync(out.rank);
  if (built && (!hash || (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash)))
    return { ok: true, ...out };
  if (!hash) return { ok: false, reason: `no prebuilt ${NCCL_LIBRARY} in ${dir} and no sources in ${NATIVE_SOURCES}` };
  const missing = gccMissing();
  if (missing) return { ok: false, reason: missing };
  try {
    mkdirSync(dir, { recursive: true });
    // Built aside and renamed into place: a chain starting at the same time never sees half a file.
    const tmp = mkdtempSync(join(dir, '.build-nccl-'));
    try {
      execFileSync('gcc', [...LIB_FLAGS, '-o', join(tmp, NCCL_LIBRARY), join(NATIVE_SOURCES, SOURCES[0])], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      execFileSync('gcc', ['-o', join(tmp, NCCL_RANK), join(NATIVE_SOURCES, SOURCES[1]), ...RANK_FLAGS], {
        cwd: tmp,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      renameSync(join(tmp, NCCL_LIBRARY), out.library);
      renameSync(join(tmp, NCCL_RANK), out.rank);
      writeFileSync(stamp, `${hash}\n`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return { ok: true, ...out };
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return {
      ok: false,
      reason: `gcc could not build the stand-in ${NCCL_LIBRARY}: ${stderr || (err as Error).message}`,
    };
  }
}
