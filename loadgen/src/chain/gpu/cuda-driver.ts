/**
 * One LLM replica's CUDA driver process (loadgen/native/llm-cuda-driver.c, linked against the stand-in libcuda.so.1):
 * the engine's KV-cache allocations become real cuMemAlloc_v2 calls in a process registered as the replica's pod, so a
 * uretprobe on the library sees them, and a failing one returns 2 (CUDA_ERROR_OUT_OF_MEMORY). A serving allocation is
 * freed again (cuMemFree_v2), a leaked one (gpu_memory_leak) is kept until `release`. Commands go over stdin, replies
 * come back in order. The process ends when this one does (end of its stdin).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import type { CudaStandIn } from './cuda-stand-in';

export class CudaDriver {
  private readonly pending: Array<(result: number) => void> = [];
  private buffered = '';
  private ready = false;
  private alive = true;

  private constructor(
    private readonly child: ChildProcess,
    private readonly log: Logger
  ) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.onData(d));
    child.stdin!.on('error', () => {}); // EPIPE after the driver died: reported by 'exit'
    child.once('error', (err) => this.gone(`could not start: ${err.message}`));
    child.once('exit', (code, sig) => this.gone(`exited (${sig ?? code})`));
  }

  static start(standIn: CudaStandIn, log: Logger): CudaDriver {
    return new CudaDriver(spawn(standIn.driver, [], { stdio: ['pipe', 'pipe', 'inherit'] }), log);
  }

  get pid(): number | undefined {
    return this.alive ? this.child.pid : undefined;
  }

  /** cuMemAlloc_v2(bytes) in the driver process, failing when asked; resolves with its CUresult (-1: driver gone).
   *  undefined when the driver is gone (then nothing reaches the kernel). */
  alloc(bytes: number, fail: boolean): Promise<number> | undefined {
    return this.send(`alloc ${Math.max(1, Math.round(bytes))} ${fail ? 1 : 0}`);
  }

  /** cuMemAlloc_v2(bytes) kept and never freed (gpu_memory_leak); resolves with its CUresult (-1: driver gone). */
  leak(bytes: number, fail: boolean): Promise<number> | undefined {
    return this.send(`leak ${Math.max(1, Math.round(bytes))} ${fail ? 1 : 0}`);
  }

  /** cuMemFree_v2 on every leaked allocation (the replica restarted); resolves with how many were freed. */
  release(): Promise<number> | undefined {
    return this.send('release');
  }

  private send(line: string): Promise<number> | undefined {
    if (!this.alive) return undefined;
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.child.stdin!.write(`${line}\n`);
    });
  }

  stop(): void {
    this.alive = false;
    this.child.stdin!.end();
    this.child.kill('SIGTERM');
  }

  private onData(d: string): void {
    this.buffered += d;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      if (!this.ready) {
        this.ready = line.startsWith('ready');
        continue;
      }
      const r = Number(line);
      this.pending.shift()?.(Number.isInteger(r) ? r : -1);
    }
  }

  private gone(why: string): void {
    const wasAlive = this.alive;
    this.alive = false;
    for (const p of this.pending.splice(0)) p(-1);
    if (wasAlive)
      this.log.warn(
        { pid: this.child.pid },
        `the CUDA driver process ${why}: GPU OOM goes on without the kernel signal`
      );
  }
}
