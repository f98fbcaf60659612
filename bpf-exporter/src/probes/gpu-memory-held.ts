/**
 * gpu_memory_held: GPU memory each process holds through the CUDA driver (bytes allocated minus bytes freed) and how it
 * grows. uprobe + uretprobe on the allocation entry points (the size from the call's arguments, the device pointer read
 * from the caller's `CUdeviceptr *` once the call returned CUDA_SUCCESS), uprobe on the frees (the size found by
 * pointer in a [pid, pointer] map). Every call is counted in the kernel per [pid, cgroup, op] with its bytes (the
 * metrics stay exact at any rate); a record is printed only when a process's held memory has moved by
 * GPU_MEMORY_STEP_BYTES since its last record, carrying what it holds now, how much it grew since the run began (the
 * last time it was back at the run's level, or fell a step, or the probe first saw it), over how long, and the
 * allocations and frees meanwhile: a leak is a run of such records that only climbs. Memory allocated before the probe attached is not known (its frees count, with 0 bytes).
 * Attached like gpu_alloc_fail (every libcuda the workloads map, plus HOPSCOPE_BPF_LIBCUDA). Verified against the
 * stand-in library (loadgen/native/); unverified on a real NVIDIA driver (no GPU on these machines), whose caching
 * allocators (PyTorch's) call cuMemAlloc rarely: a leak inside such a cache is not visible here, one that grows the
 * cache is.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { big, json, labelCache, num, str, type ProbeModule } from '../core/probe';
import { bpfPath } from '../core/probe-path';
import { isLibcuda } from './gpu-alloc-fail';

/** Driver entry points whose first argument is a `CUdeviceptr *` and second the byte size. */
export const CUDA_PTR_ALLOC_SYMBOLS = [
  'cuMemAlloc_v2',
  'cuMemAllocManaged',
  'cuMemAllocAsync',
  'cuMemAllocFromPoolAsync',
];
/** Driver entry points whose first argument is the `CUdeviceptr` freed. */
export const CUDA_FREE_SYMBOLS = ['cuMemFree_v2', 'cuMemFreeAsync'];

/** A record each time a process's held memory moved this much since its last one (64 MiB). */
export const GPU_MEMORY_STEP_BYTES = 64 * 2 ** 20;

const OPS = ['alloc', 'free'] as const;

export const gpuMemoryHeldProbe: ProbeModule = {
  name: 'gpu_memory_held',
  description: 'GPU memory held per process (cuMemAlloc_v2 and friends minus cuMemFree_v2) and its growth',
  requirements: () => [],
  uprobes: [
    { file: 'libcuda', matches: isLibcuda, symbols: [...CUDA_PTR_ALLOC_SYMBOLS, ...CUDA_FREE_SYMBOLS], anyOf: true },
  ],
  uprobesRequired: true,
  // Its bytes as the histogram value (no bounds: one bucket), so the kernel sums them exactly.
  tallies: [{ name: 'mem', type: 'gpu_memory_held', dims: ['op'], bucketsNs: [] }],
  // One entry per live allocation.
  env: { BPFTRACE_MAP_KEYS_MAX: '65536' },
  program(_o, targets, kit) {
    // Only symbols each library exports are attached: bpftrace refuses a program naming a missing one.
    const points = (kind: string, of: string[]): string =>
      targets
        .flatMap((t) => t.symbols.filter((s) => of.includes(s)).map((s) => `${kind}:${bpfPath(t.path)}:${s}`))
        .join(',\n');
    const allocs = points('uprobe', CUDA_PTR_ALLOC_SYMBOLS);
    const frees = points('uprobe', CUDA_FREE_SYMBOLS);
    const step = GPU_MEMORY_STEP_BYTES;
    // After @gm_held changed by an op ($op, $sz): the run (since held last fell) and the record when it moved a step.
    const account = (): string => `
  $held = @gm_held[pid];
  if (@gm_run_t[pid] == 0) { @gm_run_t[pid] = nsecs; @gm_run_h[pid] = $before; @gm_run_a[pid] = @gm_n[pid, 0] - ($op == 0 ? 1 : 0); @gm_run_f[pid] = @gm_n[pid, 1] - ($op == 1 ? 1 : 0); }
  if ($held <= @gm_run_h[pid]) { @gm_run_t[pid] = nsecs; @gm_run_h[pid] = $held; @gm_run_a[pid] = @gm_n[pid, 0]; @gm_run_f[pid] = @gm_n[pid, 1]; }
  $mark = @gm_mark[pid];
  $moved = 0;
  if ($held >= $mark + ${step}) { $moved = 1; }
  if ($held + ${step} <= $mark) {
    $moved = 1;
    @gm_run_t[pid] = nsecs; @gm_run_h[pid] = $held; @gm_run_a[pid] = @gm_n[pid, 0]; @gm_run_f[pid] = @gm_n[pid, 1];
  }
  if ($moved) { @gm_mark[pid] = $held; }
  ${kit.event({
    type: 'gpu_memory_held',
    pid: 'pid',
    cg: 'cgroup',
    comm: 'comm',
    tally: { name: 'mem', dims: ['$op'], valueNs: '$sz' },
    recordWhen: '$moved',
    printf: {
      fmt: '{\\"t\\":%llu,\\"pid\\":%d,\\"cg\\":%llu,\\"op\\":%d,\\"size\\":%llu,\\"held\\":%llu,\\"from\\":%llu,\\"over_ns\\":%llu,\\"allocs\\":%llu,\\"frees\\":%llu,\\"fn\\":\\"%s\\"}\\n',
      args: [
        'nsecs',
        'pid',
        'cgroup',
        '$op',
        '$sz',
        '$held',
        '@gm_run_h[pid]',
        'nsecs - @gm_run_t[pid]',
        '@gm_n[pid, 0] - @gm_run_a[pid]',
        '@gm_n[pid, 1] - @gm_run_f[pid]',
        'probe',
      ],
    },
  })}`;
    const parts: string[] = [];
    if (allocs)
      parts.push(`
${allocs} { @gm_p[tid] = arg0; @gm_s[tid] = arg1; }
${points('uretprobe', CUDA_PTR_ALLOC_SYMBOLS)}
{
  $p = @gm_p[tid]; $sz = @gm_s[tid]; delete(@gm_p[tid]); delete(@gm_s[tid]);
  if ((int32)retval == 0 && $p != 0 && $sz > 0) {
  $ptr = *(uint64 *)uptr($p);
  $op = 0;
  $before = @gm_held[pid];
  @gm_sz[pid, $ptr] = $sz;
  @gm_held[pid] = $before + $sz;
  @gm_n[pid, 0] = @gm_n[pid, 0] + 1;
  ${account()}
  }
}`);
    if (frees)
      parts.push(`
${frees}
{
  $sz = @gm_sz[pid, arg0];
  if (arg0 != 0) {
  delete(@gm_sz[pid, arg0]);
  $op = 1;
  $before = @gm_held[pid];
  @gm_held[pid] = $before - $sz;
  @gm_n[pid, 1] = @gm_n[pid, 1] + 1;
  ${account()}
  }
}`);
    return `${parts.join('\n')}
${kit.footer(['@gm_p', '@gm_s', '@gm_sz', '@gm_held', '@gm_n', '@gm_mark', '@gm_run_t', '@gm_run_h', '@gm_run_a', '@gm_run_f'])}`;
  },
  parse(line) {
    const p = json(line);
    const op = num(p.op);
    const size = num(p.size);
    const held = num(p.held);
    const from = num(p.from);
    return {
      type: 'gpu_memory_held',
      nsecs: big(p.t),
      pid: num(p.pid),
      cgroupId: num(p.cg),
      detail: {
        function: str(p.fn).split(':').pop() ?? '',
        op: OPS[op] ?? `op ${op}`,
        bytes: size,
        heldBytes: held,
        grewBytes: held - from,
        overMs: num(p.over_ns) / 1e6,
        allocs: num(p.allocs),
        frees: num(p.frees),
      },
      tally: { name: 'mem', dims: [op], valueNs: size },
    };
  },
  metrics(registry: Registry, pod) {
    const calls = new Counter({
      name: 'hopscope_gpu_memory_calls_total',
      help: 'CUDA driver allocations and frees seen, by pod and call (alloc, free)',
      labelNames: [...pod.names, 'call'],
      registers: [registry],
    });
    const bytes = new Counter({
      name: 'hopscope_gpu_memory_bytes_total',
      help: 'Bytes of GPU memory allocated and freed through the CUDA driver, by pod and call (alloc, free); a free of memory allocated before the probe attached counts 0 bytes',
      labelNames: [...pod.names, 'call'],
      registers: [registry],
    });
    const held = new Gauge({
      name: 'hopscope_gpu_memory_held_bytes',
      help: "GPU memory the pod's processes hold through the CUDA driver (bytes allocated minus freed since the probe attached); its growth is deriv() of it",
      labelNames: [...pod.names],
      registers: [registry],
    });
    const callsOf = labelCache(calls);
    const bytesOf = labelCache(bytes);
    const heldOf = labelCache(held);
    const sums = new Map<string, number>();
    return {
      add(_tally, [op], count, sumBytes, labels) {
        const call = OPS[op] ?? `op ${op}`;
        callsOf({ ...labels, call }).inc(count);
        bytesOf({ ...labels, call }).inc(sumBytes);
        const key = Object.values(labels).join('\u0000');
        const v = (sums.get(key) ?? 0) + (op === 0 ? sumBytes : -sumBytes);
        sums.set(key, v);
        heldOf(labels).set(v);
      },
    };
  },
};
