/**
 * One rank of a tensor-parallel group: either a process (loadgen/native/llm-nccl-rank.c, linked against the stand-in
 * libnccl.so.2) whose every collective is a real ncclAllReduce call a uprobe sees in a process registered as the
 * rank's pod, or, where the stand-in could not be built, the same behaviour in this process (no kernel signal).
 * Either way a stalled collective answers only once the rank is aborted (the group's watchdog), with ncclTimeout.
 */
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';
import { NCCL_TIMEOUT } from '../../../../contract/nccl';
import { NativeProcess } from './native-process';
import type { NcclStandIn } from './nccl-stand-in';

export { NCCL_RESULTS, NCCL_TIMEOUT } from '../../../../contract/nccl';

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
  private readonly proc: NativeProcess;

  constructor(standIn: NcclStandIn, size: number, rank: number, log: Logger) {
    const child = spawn(standIn.rank, [String(size), String(rank)], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.proc = new NativeProcess(child, (why) => log.warn({ pid: child.pid, rank }, `the NCCL rank process ${why}`));
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  allReduce(count: number, stall: boolean): Promise<number> {
    return this.proc.send(`allreduce ${Math.max(1, Math.round(count))} ${stall ? 1 : 0}`) ?? Promise.resolve(-1);
  }

  /** ncclCommAbort: the rank process's stalled call returns ncclTimeout (SIGUSR1). */
  abort(): void {
    this.proc.kill('SIGUSR1');
  }

  stop(): void {
    this.proc.stop();
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
