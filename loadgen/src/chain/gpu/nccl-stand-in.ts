/**
 * The stand-in NCCL library (loadgen/native/libnccl-stand-in.c → `libnccl.so.2`) and the per-rank process
 * `llm-nccl-rank` linked against it, built with gcc on first use beside the stand-in CUDA driver (`nativeDir()`), or
 * taken prebuilt from `HOPSCOPE_NATIVE_DIR`. Its own build stamp (hash of its sources and flags) keeps an up-to-date
 * library in place: an eBPF exporter's uprobes are attached to that file, and replacing it would detach them.
 * native-build.ts builds it, as it builds the CUDA pair. Where gcc is missing
 * the answer says so, and tensor-parallel groups run their collectives without the kernel signal.
 */
import { buildNativePair } from './native-build';

export const NCCL_LIBRARY = 'libnccl.so.2';
export const NCCL_RANK = 'llm-nccl-rank';

export interface NcclStandIn {
  library: string;
  rank: string;
}
export type NcclStandInResult = ({ ok: true } & NcclStandIn) | { ok: false; reason: string };

let cached: NcclStandInResult | undefined;

/** The built stand-in, building it when missing or out of date (once per process). */
export function ensureNcclStandIn(env: NodeJS.ProcessEnv = process.env): NcclStandInResult {
  if (cached) return cached;
  const b = buildNativePair(
    {
      library: NCCL_LIBRARY,
      librarySource: 'libnccl-stand-in.c',
      program: NCCL_RANK,
      programSource: 'llm-nccl-rank.c',
      stamp: 'nccl-build.stamp',
    },
    env
  );
  cached = b.ok ? { ok: true, library: b.library, rank: b.program } : b;
  return cached;
}
