/**
 * One rank of a tensor-parallel group: either a process (loadgen/native/llm-nccl-rank.c, linked against the stand-in
 * libnccl.so.2) whose every collective is a real ncclAllReduce call a uprobe sees in a process registered as the
 * rank's pod, or, where the stand-in could not be built, the same behaviour in this process (no kernel signal).
 * Either way a stalled collective answers only once the rank is aborted (the group's watchdog), with ncclTimeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import type { NcclStandIn } from './nccl-stand-in';

/** ncclResult_t values (NVIDIA/nccl src/nccl.h.in, commit 021e8045ff77a8a9fba909617a0129d3c3d44def). */
export const NCCL_RESULTS: Record<number, string> = {
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

export interface NcclRank {
  /** The rank's process (absent when simulated in this process, or once it is gone). */
  readonly pid?: number;
  /** One ncclAllReduce of `count` elements; `stall`: it blocks until abort(). Resolves with the ncclResult_t
   *  (-1: the rank process is gone). */
  allReduce(count: number, stall: boolean): Promise<number>;
  /** ncclCommAbort: a stalled collective returns (ncclTimeout). */
  abort(): void;
  stop(): void;
}

/** A rank in a process linked against the stand-in library. */
export class NcclRankProcess implements NcclRank {
  private readonly pending: Array<(result: number) => void> = [];
  private buffered = '';
  private ready = false;
  private alive = true;
  private readonly child: ChildProcess;

  constructor(standIn: NcclStandIn, size: number, rank: number, log: Logger) {
    this.child = spawn(standIn.rank, [String(size), String(rank)], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => this.onData(d));
    this.child.stdin!.on('error', () => {}); // EPIPE after the rank died: reported by 'exit'
    const gone = (why: string): void => {
      const wasAlive = this.alive;
      this.alive = false;
      for (const p of this.pending.splice(0)) p(-1);
      if (wasAlive) log.warn({ pid: this.child.pid, rank }, `the NCCL rank process ${why}`);
    };
    this.child.once('error', (err) => gone(`could not start: ${err.message}`));
    this.child.once('exit', (code, sig) => gone(`exited (${sig ?? code})`));
  }

  get pid(): number | undefined {
    return this.alive ? this.child.pid : undefined;
  }

  allReduce(count: number, stall: boolean): Promise<number> {
    if (!this.alive) return Promise.resolve(-1);
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.child.stdin!.write(`allreduce ${Math.max(1, Math.round(count))} ${stall ? 1 : 0}\n`);
    });
  }

  abort(): void {
    if (this.alive) this.child.kill('SIGUSR1');
  }

  stop(): void {
    const wasAlive = this.alive;
    this.alive = false;
    for (const p of this.pending.splice(0)) p(-1);
    if (!wasAlive) return;
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
}

/** The same contract in this process: no kernel signal (no stand-in library, e.g. no gcc). */
export class SimulatedNcclRank implements NcclRank {
  private stalled: Array<(r: number) => void> = [];
  readonly pid = undefined;
  allReduce(_count: number, stall: boolean): Promise<number> {
    if (!stall) return Promise.resolve(0);
    return new Promise((resolve) => this.stalled.push(resolve));
  }
  abort(): void {
    for (const r of this.stalled.splice(0)) r(NCCL_TIMEOUT);
  }
  stop(): void {
    for (const r of this.stalled.splice(0)) r(-1);
  }
}
