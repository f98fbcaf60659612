/**
 * Builds the stand-ins now — the CUDA driver (libcuda.so.1 and llm-cuda-driver) and NCCL (libnccl.so.2 and
 * llm-nccl-rank, for HOPSCOPE_TP ≥ 2) — and prints where the CUDA library is, so a bpf-exporter started before the
 * chain can be pointed at it (HOPSCOPE_BPF_LIBCUDA). The chain builds them on first use too; the Docker image ships
 * what this builds.
 */
import { ensureCudaStandIn, nativeDir } from '../src/chain/gpu/cuda-stand-in';
import { ensureNcclStandIn } from '../src/chain/gpu/nccl-stand-in';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`Usage: tsx loadgen/native/build.ts [--json]

Builds loadgen/native/*.c with gcc into ${nativeDir()} (HOPSCOPE_NATIVE_DIR overrides) unless an up-to-date build is
there, then prints the library's path (for HOPSCOPE_BPF_LIBCUDA). Exit 1, with the reason, when it cannot (no gcc).`);
  process.exit(0);
}
const fail = (reason: string): never => {
  console.error(`hopscope native: ${reason}`);
  process.exit(1);
};
const cuda = ensureCudaStandIn();
if (!cuda.ok) fail(cuda.reason);
const nccl = ensureNcclStandIn();
if (!nccl.ok) fail(nccl.reason);
if (cuda.ok && nccl.ok)
  console.log(
    process.argv.includes('--json')
      ? JSON.stringify({ library: cuda.library, driver: cuda.driver, nccl: { library: nccl.library, rank: nccl.rank } })
      : cuda.library
  );
