/**
 * The stand-in CUDA driver (loadgen/native/): `libcuda.so.1` and the per-replica driver process `llm-cuda-driver`
 * linked against it, built with gcc on first use into `<repo>/.cache/native/` (or taken prebuilt from
 * `HOPSCOPE_NATIVE_DIR`, as the Docker image ships them). A build stamp (hash of the sources and flags) keeps an
 * up-to-date library in place: an eBPF exporter attaches its uprobes to that file, and replacing the file would
 * detach them. Where gcc is missing the answer says so, and the chain simulates GPU OOM without the kernel signal.
 */
import { buildNativePair } from './native-build';

export { NATIVE_SOURCES, REPO_ROOT, nativeDir } from './native-build';
export const LIBRARY = 'libcuda.so.1';
export const DRIVER = 'llm-cuda-driver';

export interface CudaStandIn {
  library: string;
  driver: string;
}
export type StandInResult = ({ ok: true } & CudaStandIn) | { ok: false; reason: string };

let cached: StandInResult | undefined;

/** The built stand-in, building it when missing or out of date (once per process). */
export function ensureCudaStandIn(env: NodeJS.ProcessEnv = process.env): StandInResult {
  if (cached) return cached;
  const b = buildNativePair(
    {
      library: LIBRARY,
      librarySource: 'libcuda-stand-in.c',
      program: DRIVER,
      programSource: 'llm-cuda-driver.c',
      stamp: 'build.stamp',
    },
    env
  );
  cached = b.ok ? { ok: true, library: b.library, driver: b.program } : b;
  return cached;
}
