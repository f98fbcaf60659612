/* The CUDA driver side of one simulated LLM replica: a long-lived process linked against libcuda.so.1 (the stand-in,
 * libcuda-stand-in.c) that makes the replica's KV-cache allocations, so the kernel sees them in a process registered
 * as that replica's pod. One command per line on stdin, one reply per line on stdout, in order:
 *   alloc <bytes> <fail 0|1>  → cuMemAlloc_v2(bytes) (made to fail with CUDA_ERROR_OUT_OF_MEMORY when fail is 1),
 *                               freed again with cuMemFree_v2 on success (healthy serving holds nothing); replies the
 *                               CUresult, e.g. "0" or "2"
 *   leak <bytes> <fail 0|1>   → cuMemAlloc_v2(bytes) kept and never freed (gpu_memory_leak); replies the CUresult
 *   release                   → cuMemFree_v2 on every leaked allocation (the replica restarted); replies how many
 * It prints "ready <pid>" first and exits at the end of its input (when the replica goes away). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef unsigned long long CUdeviceptr;
typedef int CUresult;
#define CUDA_ERROR_OUT_OF_MEMORY 2

CUresult cuInit(unsigned int flags);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
void hopscopeStandInFailNext(CUresult result);

/* The leaked allocations, so `release` can free them. */
static CUdeviceptr *leaked = NULL;
static size_t n_leaked = 0, cap_leaked = 0;

static void keep(CUdeviceptr p) {
  if (n_leaked == cap_leaked) {
    size_t cap = cap_leaked ? cap_leaked * 2 : 256;
    CUdeviceptr *grown = realloc(leaked, cap * sizeof *grown);
    if (!grown) return; /* out of host memory: the allocation stays leaked, unreleasable */
    leaked = grown;
    cap_leaked = cap;
  }
  leaked[n_leaked++] = p;
}

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
    } else if (sscanf(line, "leak %llu %d", &bytes, &fail) == 2) {
      CUdeviceptr ptr = 0;
      if (fail) hopscopeStandInFailNext(CUDA_ERROR_OUT_OF_MEMORY);
      CUresult r = cuMemAlloc_v2(&ptr, (size_t)bytes);
      if (r == 0) keep(ptr);
      printf("%d\n", r);
    } else if (strncmp(line, "release", 7) == 0) {
      size_t n = n_leaked;
      for (size_t i = 0; i < n_leaked; i++) cuMemFree_v2(leaked[i]);
      n_leaked = 0;
      printf("%zu\n", n);
    } else {
      printf("error expected: alloc|leak <bytes> <fail 0|1>, or release\n");
    }
    fflush(stdout);
  }
  return 0;
}
