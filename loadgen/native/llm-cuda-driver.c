/* The CUDA driver side of one simulated LLM replica: a long-lived process linked against libcuda.so.1 (the stand-in,
 * libcuda-stand-in.c) that makes the replica's KV-cache allocations, so the kernel sees them in a process registered
 * as that replica's pod. One command per line on stdin, one reply per line on stdout, in order:
 *   alloc <bytes> <fail 0|1>  → cuMemAlloc_v2(bytes) (made to fail with CUDA_ERROR_OUT_OF_MEMORY when fail is 1),
 *                               freed again on success; replies the CUresult, e.g. "0" or "2"
 * It prints "ready <pid>" first and exits at the end of its input (when the replica goes away). */
#include <stdio.h>
#include <unistd.h>

typedef unsigned long long CUdeviceptr;
typedef int CUresult;
#define CUDA_ERROR_OUT_OF_MEMORY 2

CUresult cuInit(unsigned int flags);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
void hopscopeStandInFailNext(CUresult result);

int main(void) {
  char line[128];
  cuInit(0);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {
    unsigned long long bytes = 0;
    int fail = 0;
    if (sscanf(line, "alloc %llu %d", &bytes, &fail) == 2) {
      CUdeviceptr ptr = 0;
      if (fail) hopscopeStandInFailNext(CUDA_ERROR_OUT_OF_MEMORY);
      CUresult r = cuMemAlloc_v2(&ptr, (size_t)bytes);
      if (r == 0) cuMemFree_v2(ptr);
      printf("%d\n", r);
    } else {
      printf("error expected: alloc <bytes> <fail 0|1>\n");
    }
    fflush(stdout);
  }
  return 0;
}
