/* Stand-in for libcuda.so.1 (no GPU here): the CUDA driver allocation entry points with their real signatures.
 * An allocation larger than 1 GiB fails with 2 = CUDA_ERROR_OUT_OF_MEMORY, as a full GPU would answer. */
#include <stddef.h>
#include <stdlib.h>
typedef unsigned long long CUdeviceptr;
typedef int CUresult;
#define LIMIT (1ULL << 30)
__attribute__((noinline)) CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  if (bytesize > LIMIT) return 2;
  *dptr = (CUdeviceptr)0x7000000000ULL;
  return 0;
}
__attribute__((noinline)) CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  (void)flags;
  return cuMemAlloc_v2(dptr, bytesize);
}
__attribute__((noinline)) CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) {
  if (bytesize > LIMIT) return 2;
  *pp = malloc(1);
  return 0;
}
