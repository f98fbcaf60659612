/**
 * nccl_collective: NCCL collective calls (ncclAllReduce) that took longer than SLOW_NCCL_NS in a process — the stalled
 * or slow rank of a tensor-parallel group — with their ncclResult_t, element count and data type.
 * A uprobe/uretprobe pair on ncclAllReduce (NCCL's signature: sendbuff, recvbuff, count, datatype, op, comm, stream;
 * NVIDIA/nccl src/nccl.h.in, commit 021e8045ff77a8a9fba909617a0129d3c3d44def) in every libnccl.so.2 the workloads map
 * (found in registered and pod processes' /proc/<pid>/maps: core/uprobe-files.ts, one attach per distinct file). Only
 * calls past the threshold become records and counts (in the kernel, per [pid, cgroup, result], bucketed with the
 * histogram's bounds): a healthy group makes thousands of fast calls a second, none of them evidence.
 * Verified against the chain's stand-in library (loadgen/native/libnccl-stand-in.c), whose call blocks on the host
 * while stalled. Unverified on a real NCCL: there ncclAllReduce enqueues a kernel on the stream and returns, so a hang
 * on the GPU is not a long host call (only a blocking communicator, NCCL_BLOCKING or a full queue, makes it one).
 */
import { Histogram, type Registry } from 'prom-client';
import { NCCL_RESULTS } from '../../../contract/nccl';
import { secondsToNs } from '../core/kit';
import { bpfPath } from '../core/probe-path';
import { big, json, labelCache, num, str, observeMany, type ProbeModule } from '../core/probe';

/** A collective this slow is reported (a decode step's all-reduce takes microseconds on NVLink). */
export const SLOW_NCCL_NS = 100_000_000;

/** Duration buckets (s) of the slow calls, shared by the kernel's bucketing and the histogram. */
export const NCCL_SLOW_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export const NCCL_SYMBOLS = ['ncclAllReduce'];

/** ncclDataType_t (nccl.h.in): name and element size in bytes. */
export const NCCL_TYPES: Record<number, [string, number]> = {
  0: ['ncclInt8', 1],
  1: ['ncclUint8', 1],
  2: ['ncclInt32', 4],
  3: ['ncclUint32', 4],
  4: ['ncclInt64', 8],
  5: ['ncclUint64', 8],
  6: ['ncclFloat16', 2],
  7: ['ncclFloat32', 4],
  8: ['ncclFloat64', 8],
  9: ['ncclBfloat16', 2],
};

/** libnccl.so.2 is a link to the versioned file (libnccl.so.2.21.5), which is what maps show. */
export const isLibnccl = (base: string): boolean => /^libnccl\.so(\.\d+)*$/.test(base);

const resultName = (r: number): string => NCCL_RESULTS[r] ?? `ncclResult_t ${r}`;

export const ncclCollectiveProbe: ProbeModule = {
  name: 'nccl_collective',
  description: `NCCL collectives (ncclAllReduce) slower than ${SLOW_NCCL_NS / 1e6} ms per process: a stalled rank`,
  requirements: () => [],
  uprobes: [{ file: 'libnccl', matches: isLibnccl, symbols: NCCL_SYMBOLS }],
  uprobesRequired: true,
  tallies: [
    { name: 'nccl', type: 'nccl_slow_collective', dims: ['result'], bucketsNs: secondsToNs(NCCL_SLOW_BUCKETS) },
  ],
  program(_o, targets, kit) {
    const points = (kind: string): string =>
      targets.flatMap((t) => t.symbols.map((s) => `${kind}:${bpfPath(t.path)}:${s}`)).join(',\n');
    return `
${points('uprobe')} { @ncs[tid] = nsecs; @ncn[tid] = arg2; @ncd[tid] = arg3; }
${points('uretprobe')}
/@ncs[tid]/
{
  $d = nsecs - @ncs[tid]; $n = @ncn[tid]; $dt = @ncd[tid];
  delete(@ncs[tid]); delete(@ncn[tid]); delete(@ncd[tid]);
  $ret = (int32)retval;
  if ($d >= ${SLOW_NCCL_NS}) {
  ${kit.event({
    type: 'nccl_slow_collective',
    pid: 'pid',
    cg: 'cgroup',
    comm: 'comm',
    tally: { name: 'nccl', dims: ['$ret'], valueNs: '$d' },
    printf: {
      fmt: '{\\"t\\":%llu,\\"pid\\":%d,\\"cg\\":%llu,\\"d\\":%llu,\\"ret\\":%d,\\"n\\":%llu,\\"dt\\":%d,\\"fn\\":\\"%s\\"}\\n',
      args: ['nsecs', 'pid', 'cgroup', '$d', '$ret', '$n', '(int32)$dt', 'probe'],
    },
  })}
  }
}
${kit.footer(['@ncs', '@ncn', '@ncd'])}`;
  },
  parse(line) {
    const p = json(line);
    const ret = num(p.ret);
    const dt = num(p.dt);
    const count = num(p.n);
    const type = NCCL_TYPES[dt];
    return {
      type: 'nccl_slow_collective',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      durationMs: num(p.d) / 1e6,
      detail: {
        function: str(p.fn).split(':').pop() ?? '',
        result: ret,
        resultName: resultName(ret),
        count,
        datatype: type?.[0] ?? `ncclDataType_t ${dt}`,
        ...(type ? { bytes: count * type[1] } : {}),
        thresholdMs: SLOW_NCCL_NS / 1e6,
      },
      tally: { name: 'nccl', dims: [ret], valueNs: num(p.d) },
    };
  },
  metrics(registry: Registry, pod) {
    const seconds = new Histogram({
      name: 'hopscope_nccl_slow_collective_duration_seconds',
      help: `NCCL collective calls (ncclAllReduce) that took longer than ${SLOW_NCCL_NS / 1e6} ms, by pod and ncclResult_t`,
      labelNames: [...pod.names, 'collective', 'result'],
      buckets: NCCL_SLOW_BUCKETS,
      registers: [registry],
    });
    const child = labelCache(seconds);
    return {
      add(_tally, [ret, bucket], count, sumNs, labels) {
        observeMany(
          child({ ...labels, collective: 'ncclAllReduce', result: resultName(ret) }),
          count,
          sumNs,
          NCCL_SLOW_BUCKETS,
          bucket
        );
      },
    };
  },
};
