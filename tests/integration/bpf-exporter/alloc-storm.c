/* Fails CUDA allocations through the (stand-in) libcuda.so.1 at a fixed rate for a while: `alloc-storm RATE SECONDS`.
 * Prints "ready" and waits for a line on stdin (so the test can register this pid), then "sent N" when done. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef unsigned long long CUdeviceptr;
int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  char line[16];
  double rate = atof(argv[1]), secs = atof(argv[2]);
  long n = 0;
  printf("ready\n");
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin)) return 1;
  double t0 = now();
  for (;;) {
    double el = now() - t0;
    if (el >= secs) break;
    long due = (long)(el * rate);
    while (n < due) { CUdeviceptr p; cuMemAlloc_v2(&p, 1ULL << 40); n++; }
    struct timespec s = {0, 200000};
    nanosleep(&s, NULL);
  }
  printf("sent %ld\n", n);
  fflush(stdout);
  return 0;
}
