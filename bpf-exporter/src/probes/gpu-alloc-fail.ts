/**
 * gpu_alloc_fail: CUDA driver allocation calls that return an error (2 = CUDA_ERROR_OUT_OF_MEMORY), by process.
 * Failures are counted in the kernel per [pid, cgroup, CUresult] (hopscope_gpu_alloc_failures_total stays exact at any
 * rate); per-event records go out within the per-event budget.
 * uretprobes on the allocation entry points of libcuda.so.1 (path from HOPSCOPE_BPF_LIBCUDA). Verified against a
 * stand-in library exporting the same symbols; unverified on a real NVIDIA driver (no GPU on these machines).
 */
import { Counter, type Registry } from 'prom-client';
import { POD_LABELS, big, json, labelCache, num, str, type ProbeModule } from '../core/probe';

/** Driver API entry points whose second argument is the byte size. */
export const CUDA_ALLOC_SYMBOLS = ['cuMemAlloc_v2', 'cuMemAlloc', 'cuMemAllocManaged', 'cuMemAllocHost_v2', 'cuMemAllocAsync', 'cuMemCreate'];

export const CUDA_ERRORS: Record<number, string> = {
  1: 'CUDA_ERROR_INVALID_VALUE', 2: 'CUDA_ERROR_OUT_OF_MEMORY', 3: 'CUDA_ERROR_NOT_INITIALIZED', 4: 'CUDA_ERROR_DEINITIALIZED',
  100: 'CUDA_ERROR_NO_DEVICE', 101: 'CUDA_ERROR_INVALID_DEVICE', 201: 'CUDA_ERROR_INVALID_CONTEXT', 999: 'CUDA_ERROR_UNKNOWN',
};

export const gpuAllocFailProbe: ProbeModule = {
  name: 'gpu_alloc_fail',
  description: 'CUDA driver allocation failures (cuMemAlloc_v2 and friends returning non-zero) per process',
  requirements: (o) => [{ kind: 'symbol', path: o.libcuda, symbols: CUDA_ALLOC_SYMBOLS, anyOf: true }],
  tallies: [{ name: 'fail', type: 'gpu_alloc_fail', dims: ['result'] }],
  program(o, found, kit) {
    // Only symbols the library exports are attached: bpftrace refuses a program naming a missing one.
    const syms = found[o.libcuda] ?? CUDA_ALLOC_SYMBOLS;
    const enter = syms.map((s) => `uprobe:${o.libcuda}:${s}`).join(',\n');
    const exit = syms.map((s) => `uretprobe:${o.libcuda}:${s}`).join(',\n');
    return `
${enter} { @size[tid] = arg1; }
${exit}
{
  $sz = @size[tid]; delete(@size[tid]);
  $ret = (int32)retval;
  if ($ret != 0) {
  ${kit.event({
    type: 'gpu_alloc_fail', pid: 'pid', cg: 'cgroup', tally: { name: 'fail', dims: ['$ret'] }, notable: '1',
    printf: {
      fmt: '{\\"t\\":%llu,\\"pid\\":%d,\\"comm\\":\\"%s\\",\\"cg\\":%llu,\\"ret\\":%d,\\"size\\":%llu,\\"fn\\":\\"%s\\"}\\n',
      args: ['nsecs', 'pid', 'comm', 'cgroup', '$ret', '$sz', 'probe'],
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
      comm: str(p.comm),
      cgroupId: num(p.cg),
      detail: { function: fn, result: ret, error: CUDA_ERRORS[ret] ?? `CUresult ${ret}`, bytes: num(p.size) },
      tally: { name: 'fail', dims: [ret] },
    };
  },
  metrics(registry: Registry) {
    const total = new Counter({
      name: 'hopscope_gpu_alloc_failures_total',
      help: 'CUDA driver memory allocations that failed, by pod and CUresult',
      labelNames: [...POD_LABELS, 'error'],
      registers: [registry],
    });
    const child = labelCache(total);
    return {
      add(_tally, [ret], count, _sum, labels) { child({ ...labels, error: CUDA_ERRORS[ret] ?? `CUresult ${ret}` }).inc(count); },
    };
  },
};
