/**
 * One LLM replica's CUDA driver process (loadgen/native/llm-cuda-driver.c, linked against the stand-in libcuda.so.1):
 * the engine's KV-cache allocations become real cuMemAlloc_v2 calls in a process registered as the replica's pod, so a
 * uretprobe on the library sees them, and a failing one returns 2 (CUDA_ERROR_OUT_OF_MEMORY). A serving allocation is
 * freed again (cuMemFree_v2), a leaked one (gpu_memory_leak) is kept until `release`. Commands go over stdin, replies
 * come back in order. The process ends when this one does (end of its stdin).
 */
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import type { CudaStandIn } from './cuda-stand-in';
import { NativeProcess } from './native-process';

export class CudaDriver {
  private constructor(private readonly proc: NativeProcess) {}

  static start(standIn: CudaStandIn, log: Logger): CudaDriver {
    const child = spawn(standIn.driver, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    return new CudaDriver(
      new NativeProcess(child, (why) =>
        log.warn({ pid: child.pid }, `the CUDA driver process ${why}: GPU OOM goes on without the kernel signal`)
      )
    );
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** cuMemAlloc_v2(bytes) in the driver process, failing when asked; resolves with its CUresult (-1: driver gone).
   *  undefined when the driver is gone (then nothing reaches the kernel). */
  alloc(bytes: number, fail: boolean): Promise<number> | undefined {
    return this.proc.send(`alloc ${Math.max(1, Math.round(bytes))} ${fail ? 1 : 0}`);
  }

  /** cuMemAlloc_v2(bytes) kept and never freed (gpu_memory_leak); resolves with its CUresult (-1: driver gone). */
  leak(bytes: number, fail: boolean): Promise<number> | undefined {
    return this.proc.send(`leak ${Math.max(1, Math.round(bytes))} ${fail ? 1 : 0}`);
  }

  /** cuMemFree_v2 on every leaked allocation (the replica restarted); resolves with how many were freed. */
  release(): Promise<number> | undefined {
    return this.proc.send('release');
  }

  stop(): void {
    this.proc.stop();
  }
}
