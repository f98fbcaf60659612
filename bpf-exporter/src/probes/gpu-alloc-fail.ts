/**
 * gpu_alloc_fail: CUDA driver allocation calls that return an error (2 = CUDA_ERROR_OUT_OF_MEMORY), by process.
 * Failures are counted in the kernel per [pid, cgroup, CUresult] (hopscope_gpu_alloc_failures_total stays exact at any
 * rate); per-event records go out within the per-event budget.
 * uretprobes on the allocation entry points of every libcuda the workloads map (a container's own, or the host
 * driver's that the NVIDIA runtime mounts into it: one attach per distinct file), plus HOPSCOPE_BPF_LIBCUDA. Verified
 * against a stand-in library exporting the same symbols; unverified on a real NVIDIA driver (no GPU on these machines).
 */
import { Counter, type Registry } from 'prom-client';
import { big, json, labelCache, num, str, type ProbeModule } from '../core/probe';
import { bpfPath } from '../core/probe-path';

/** Driver API entry points whose second argument is the byte size. */
export const CUDA_ALLOC_SYMBOLS = [
  'cuMemAlloc_v2',
  'cuMemAlloc',
  'cuMemAllocManaged',
  'cuMemAllocHost_v2',
  'cuMemAllocAsync',
  'cuMemCreate',
];

export const CUDA_ERRORS: Record<number, string> = {
  1: 'CUDA_ERROR_INVALID_VALUE',
  2: 'CUDA_ERROR_OUT_OF_MEMORY',
  3: 'CUDA_ERROR_NOT_INITIALIZED',
  4: 'CUDA_ERROR_DEINITIALIZED',
  100: 'CUDA_ERROR_NO_DEVICE',
  101: 'CUDA_ERROR_INVALID_DEVICE',
  201: 'CUDA_ERROR_INVALID_CONTEXT',
  999: 'CUDA_ERROR_UNKNOWN',
};

/** libcuda.so.1 is a link to the versioned driver file (libcuda.so.535.104.05), which is what maps show. */
export const isLibcuda = (base: string): boolean => /^libcuda\.so(\.\d+)*$/.test(base);

export const gpuAllocFailProbe: ProbeModule = {
  name: 'gpu_alloc_fail',
  description: 'CUDA driver allocation failures (cuMemAlloc_v2 and friends returning non-zero) per process',
  requirements: () => [],
  uprobes: [{ file: 'libcuda', matches: isLibcuda, symbols: CUDA_ALLOC_SYMBOLS, anyOf: true }],
  uprobesRequired: true,
  tallies: [{ name: 'fail', type: 'gpu_alloc_fail', dims: ['result'] }],
  program(_o, targets, kit) {
    // Only symbols each library exports are attached: bpftrace refuses a program naming a missing one.
    const points = (kind: string): string =>
      targets.flatMap((t) => t.symbols.map((s) => `${kind}:${bpfPath(t.path)}:${s}`)).join(',\n');
    return `
${points('uprobe')} { @size[tid] = arg1; }
${points('uretprobe')}
{
  $sz = @size[tid]; delete(@size[tid]);
  $ret = (int32)retval;
  if ($ret != 0) {
  ${kit.event({
    type: 'gpu_alloc_fail',
    pid: 'pid',
    cg: 'cgroup',
    comm: 'comm',
    tally: { name: 'fail', dims: ['$ret'] },
    printf: {
      fmt: '{\\"t\\":%llu,\\"pid\\":%d,\\"cg\\":%llu,\\"ret\\":%d,\\"size\\":%llu,\\"fn\\":\\"%s\\"}\\n',
      args: ['nsecs', 'pid', 'cgroup', '$ret', '$sz', 'probe'],
    },
  })}
  }
}
${kit.footer(['@size'])}`;
  },
  parse(line) {
    const p = json(line);
    const ret = num(p.ret);
    const fn = str(p.fn).split(':').pop() ?? '';
    return {
      type: 'gpu_alloc_fail',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      detail: { function: fn, result: ret, error: CUDA_ERRORS[ret] ?? `CUresult ${ret}`, bytes: num(p.size) },
      tally: { name: 'fail', dims: [ret] },
    };
  },
  metrics(registry: Registry, pod) {
    const total = new Counter({
      name: 'hopscope_gpu_alloc_failures_total',
      help: 'CUDA driver memory allocations that failed, by pod and CUresult',
      labelNames: [...pod.names, 'error'],
      registers: [registry],
    });
    const child = labelCache(total);
    return {
      add(_tally, [ret], count, _sum, labels) {
        child({ ...labels, error: CUDA_ERRORS[ret] ?? `CUresult ${ret}` }).inc(count);
      },
    };
  },
};
