/* Calls cuMemAlloc_v2 through the (stand-in) libcuda.so.1 with each size given on the command line and prints the
 * CUresult of each, after waiting for a line on stdin so the test can register this pid first. */
#include <stdio.h>
#include <stdlib.h>
typedef unsigned long long CUdeviceptr;
int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
int main(int argc, char **argv) {
  char line[16];
  printf("ready\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin)) return 1;
  for (int i = 1; i < argc; i++) {
    CUdeviceptr p = 0;
    int r = cuMemAlloc_v2(&p, strtoull(argv[i], NULL, 10));
    printf("alloc %s -> %d\n", argv[i], r);
  }
  fflush(stdout);
  return 0;
}
