/**
 * ncclResult_t (NVIDIA/nccl src/nccl.h.in, commit 021e8045ff77a8a9fba909617a0129d3c3d44def): what the stand-in
 * libnccl.so.2 returns (loadgen) and what the exporter's uretprobe reads back (bpf-exporter), named once.
 */
export const NCCL_RESULTS: Readonly<Record<number, string>> = {
  0: 'ncclSuccess',
  1: 'ncclUnhandledCudaError',
  2: 'ncclSystemError',
  3: 'ncclInternalError',
  4: 'ncclInvalidArgument',
  5: 'ncclInvalidUsage',
  6: 'ncclRemoteError',
  7: 'ncclInProgress',
  8: 'ncclTimeout',
};
export const NCCL_TIMEOUT = 8;
