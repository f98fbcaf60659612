/* One rank of a simulated tensor-parallel LLM group: a long-lived process linked against libnccl.so.2 (the stand-in,
 * libnccl-stand-in.c), registered as that rank's pod, that makes the rank's collective of every decode step, so the
 * kernel sees each ncclAllReduce in this rank's process. Started with the group size and its rank; one command per
 * line on stdin, one reply per line on stdout, in order:
 *   allreduce <count> <stall 0|1>  → ncclAllReduce(count bf16 elements, ncclSum) (stalled until the communicator is
 *                                     aborted when stall is 1); replies the ncclResult_t, e.g. "0" or "8"
 * SIGUSR1 aborts the communicator (ncclCommAbort), as the group's watchdog does when a collective times out.
 * It prints "ready <pid>" first and exits at the end of its input (when the group goes away or restarts). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct CUstream_st *cudaStream_t;
typedef int ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
#define NCCL_BFLOAT16 9
#define NCCL_SUM 0

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, ncclComm_t comm,
                           cudaStream_t stream);
void hopscopeStandInStallNext(void);

static ncclComm_t comm;

static void on_abort(int sig) {
  (void)sig;
  if (comm) ncclCommAbort(comm);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: llm-nccl-rank <nranks> <rank>\n");
    return 2;
  }
  int nranks = atoi(argv[1]), rank = atoi(argv[2]);
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclResult_t r = ncclCommInitRank(&comm, nranks, id, rank);
  if (r != 0) {
    fprintf(stderr, "llm-nccl-rank: ncclCommInitRank(%d, %d) = %d\n", nranks, rank, r);
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_abort;
  sigaction(SIGUSR1, &sa, NULL);
  /* The stand-in reads neither buffer: one small pair stands for the step's activations. */
  static unsigned short sendbuf[8], recvbuf[8];
  char line[128];
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {
    unsigned long long count = 0;
    int stall = 0;
    if (sscanf(line, "allreduce %llu %d", &count, &stall) == 2) {
      if (stall) hopscopeStandInStallNext();
      r = ncclAllReduce(sendbuf, recvbuf, (size_t)count, NCCL_BFLOAT16, NCCL_SUM, comm, NULL);
      printf("%d\n", r);
    } else {
      printf("error expected: allreduce <count> <stall 0|1>\n");
    }
    fflush(stdout);
  }
  ncclCommDestroy(comm);
  return 0;
}
