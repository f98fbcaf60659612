/* A stand-in for NCCL's library, libnccl.so.2 (these machines have no GPU and no NVLink): the communicator and
 * all-reduce entry points with NCCL's real signatures, types and result codes, as NVIDIA/nccl declares them in
 * src/nccl.h.in (commit 021e8045ff77a8a9fba909617a0129d3c3d44def). The simulated chain's tensor-parallel LLM groups
 * run one rank process per rank (llm-nccl-rank.c) linked against it, each calling ncclAllReduce once per decode step,
 * so an eBPF uprobe/uretprobe pair on ncclAllReduce times a real call in a process registered as that rank's pod.
 *
 * Not NCCL: the call does no reduction (no device memory to reduce; the buffers are not touched) and completes on the
 * host at once, unless the stand-in's one switch stalled it (the nccl_timeout fault): then it blocks until the
 * communicator is aborted (ncclCommAbort, which the rank process calls from its SIGUSR1 handler when the group's
 * watchdog fires, as torch's watchdog aborts the communicators of a timed-out collective) and returns ncclTimeout.
 * Built on first use into <repo>/.cache/native/libnccl.so.2 (loadgen/src/chain/gpu/nccl-stand-in.ts). */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

typedef struct CUstream_st *cudaStream_t;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;

typedef enum {
  ncclInt8 = 0, ncclChar = 0, ncclUint8 = 1, ncclInt32 = 2, ncclInt = 2, ncclUint32 = 3, ncclInt64 = 4,
  ncclUint64 = 5, ncclFloat16 = 6, ncclHalf = 6, ncclFloat32 = 7, ncclFloat = 7, ncclFloat64 = 8, ncclDouble = 8,
  ncclBfloat16 = 9
} ncclDataType_t;

typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;

struct ncclComm {
  int nranks;
  int rank;
  volatile sig_atomic_t aborted;
};
typedef struct ncclComm *ncclComm_t;

static volatile sig_atomic_t stall_next = 0;

/* Not NCCL: the stand-in's one switch. The next collective blocks until its communicator is aborted. */
void hopscopeStandInStallNext(void) { stall_next = 1; }

__attribute__((noinline)) ncclResult_t ncclGetVersion(int *version) {
  if (!version) return ncclInvalidArgument;
  *version = 22305; /* NCCL_VERSION(2,23,5): what the stand-in answers, not a claim about any GPU */
  return ncclSuccess;
}

__attribute__((noinline)) ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId) return ncclInvalidArgument;
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) uniqueId->internal[i] = 0;
  return ncclSuccess;
}

__attribute__((noinline)) ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  (void)commId;
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  struct ncclComm *c = calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  c->nranks = nranks;
  c->rank = rank;
  *comm = c;
  return ncclSuccess;
}

/* Async-signal-safe: only sets the communicator's flag (the rank process calls it from a signal handler). */
__attribute__((noinline)) ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclInvalidArgument;
  comm->aborted = 1;
  return ncclSuccess;
}

__attribute__((noinline)) ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclInvalidArgument;
  free(comm);
  return ncclSuccess;
}

__attribute__((noinline)) ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                     cudaStream_t stream) {
  (void)stream;
  if (!comm || !sendbuff || !recvbuff) return ncclInvalidArgument;
  if ((int)datatype < 0 || (int)datatype > ncclBfloat16 || (int)op < 0 || (int)op > ncclAvg) return ncclInvalidArgument;
  if (comm->aborted) return ncclInvalidUsage;
  (void)count;
  if (stall_next) {
    stall_next = 0;
    struct timespec tick = {0, 1000000}; /* 1 ms */
    while (!comm->aborted) nanosleep(&tick, NULL);
    return ncclTimeout;
  }
  return ncclSuccess;
}
