/**
 * Builds the stand-in CUDA driver (libcuda.so.1 and llm-cuda-driver) now and prints where it is, so a bpf-exporter
 * started before the chain can be pointed at the library (HOPSCOPE_BPF_LIBCUDA). The chain builds it on first use too.
 */
import { ensureCudaStandIn, nativeDir } from '../src/chain/gpu/cuda-stand-in';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`Usage: tsx loadgen/native/build.ts [--json]

Builds loadgen/native/*.c with gcc into ${nativeDir()} (HOPSCOPE_NATIVE_DIR overrides) unless an up-to-date build is
there, then prints the library's path (for HOPSCOPE_BPF_LIBCUDA). Exit 1, with the reason, when it cannot (no gcc).`);
  process.exit(0);
}
const r = ensureCudaStandIn();
if (!r.ok) {
  console.error(`hopscope native: ${r.reason}`);
  process.exit(1);
}
console.log(process.argv.includes('--json') ? JSON.stringify({ library: r.library, driver: r.driver }) : r.library);
