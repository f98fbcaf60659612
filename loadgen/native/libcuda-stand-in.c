/* A stand-in for the CUDA driver library, libcuda.so.1 (these machines have no GPU): the allocation entry points with
 * their real signatures and return codes. The simulated chain's LLM replicas allocate their KV cache through it (one
 * driver process per replica, llm-cuda-driver.c), so an eBPF uretprobe on cuMemAlloc_v2 sees a real call returning a
 * real CUresult: 2 = CUDA_ERROR_OUT_OF_MEMORY when the gpu_oom fault makes the allocation fail.
 * Built on first use into <repo>/.cache/native/libcuda.so.1 (loadgen/src/chain/gpu/cuda-stand-in.ts). */
#include <stddef.h>

typedef unsigned long long CUdeviceptr;
typedef int CUresult;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1

static CUresult next_result = CUDA_SUCCESS;
static CUdeviceptr next_address = 0x7000000000ULL;

/* Not CUDA: the stand-in's one switch. The next allocation answers `result` (what a full GPU answers). */
void hopscopeStandInFailNext(CUresult result) { next_result = result; }

__attribute__((noinline)) CUresult cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_SUCCESS;
}

__attribute__((noinline)) CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  if (next_result != CUDA_SUCCESS) {
    CUresult r = next_result;
    next_result = CUDA_SUCCESS;
    return r;
  }
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *dptr = next_address;
  next_address += (bytesize + 0xfffULL) & ~0xfffULL;
  return CUDA_SUCCESS;
}

__attribute__((noinline)) CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return dptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
