/**
 * A tensor-parallel group: one LLM replica served by `size` ranks, one process (pod) per rank, that make one
 * all-reduce together per engine step. Pods are named as LeaderWorkerSet names a multi-node vLLM group's: the leader
 * (rank 0, the replica's pod that serves HTTP) is `<group>`, rank r is `<group>-<r>`.
 *
 * The watchdog: a collective that has not completed on every rank within `timeoutMs` times out, as torch's
 * ProcessGroupNCCL watchdog does ("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…,
 * OpType=ALLREDUCE, NumelIn=…, NumelOut=…, Timeout(ms)=…) ran for … milliseconds before timing out.",
 * pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, commit cf1380dfb6c8552c8cdb791a85a89499775ad409),
 * and the step fails. The ranks that had not answered are the stalled ones: they are aborted (ncclCommAbort, so
 * their call returns), the group is torn down and started again after `restartMs` (new rank processes), as vLLM's
 * engine dies (EngineDeadError) and its pods are restarted. The timeout is the chain's
 * HOPSCOPE_EXECUTE_MODEL_TIMEOUT_SECONDS, named after vLLM's VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (vllm/envs.py,
 * vllm-project/vllm commit f218f9c24d224800e0ea4488aa71bd8215c8bdcd: "Timeout in seconds for execute_model RPC calls
 * in multiprocessing executor (only applies when TP > 1)", default 300).
 */
import type { Logger } from 'pino';
import { NCCL_RESULTS, type NcclRank } from './nccl-rank';

/** How long an aborted rank is given to return from its collective (so the kernel sees the call end). */
const ABORT_GRACE_MS = 500;

/** What timed out: the group, the stalled rank(s), the collective, and the watchdog's own message. */
export interface NcclTimeoutInfo {
  group: string;
  size: number;
  /** The first rank that had not completed the collective (ranks in `stalledRanks`). */
  rank: number;
  rankPod: string;
  stalledRanks: number[];
  collective: 'ncclAllReduce';
  /** The collective's sequence number in this group (torch's SeqNum), from 1 after each start. */
  seq: number;
  count: number;
  timeoutMs: number;
  ranForMs: number;
  /** The stalled rank's ncclResult_t once aborted (-1: its process was gone), and its name. */
  result: number;
  resultName: string;
  /** Pid of the stalled rank's process (absent when simulated). */
  pid?: number;
  message: string;
}

export class NcclTimeoutError extends Error {
  constructor(readonly info: NcclTimeoutInfo) {
    super(info.message);
  }
}

export interface TpGroupOptions {
  /** The group's name: its leader pod. */
  group: string;
  size: number;
  timeoutMs: number;
  restartMs: number;
  startRank: (rank: number) => NcclRank;
  /** The rank the nccl_timeout fault stalls now, if any. */
  stalledRank: () => number | undefined;
  /** Called with the ranks' processes at every (re)start (to register each as its pod). */
  onStart?: (ranks: Array<{ rank: number; pod: string; pid?: number }>) => void;
  log: Logger;
}

export const rankPod = (group: string, rank: number): string => (rank === 0 ? group : `${group}-${rank}`);

export class TpGroup {
  private ranks: NcclRank[] = [];
  private seq = 0;
  private restartTimer?: NodeJS.Timeout;
  private stopped = false;
  /** Epoch ms the group is back after a watchdog timeout (0: up). */
  restartingUntil = 0;
  restarts = 0;
  timeouts = 0;

  constructor(readonly opts: TpGroupOptions) {
    this.start();
  }

  get size(): number {
    return this.opts.size;
  }
  get restarting(): boolean {
    return this.restartingUntil > 0;
  }
  /** The ranks' processes now (rank → pid; absent when simulated or restarting). */
  get pids(): Array<number | undefined> {
    return this.ranks.map((r) => r.pid);
  }

  /** One all-reduce of `count` elements on every rank; rejects with NcclTimeoutError when the watchdog fires. */
  async allReduce(count: number): Promise<void> {
    if (this.restarting || this.stopped) throw new Error(`tensor-parallel group ${this.opts.group} is not running`);
    const seq = ++this.seq;
    const stalled = this.opts.stalledRank();
    const ranks = this.ranks;
    const done = new Map<number, number>();
    const calls = ranks.map((r, i) =>
      r.allReduce(count, i === stalled).then((res) => {
        done.set(i, res);
        return res;
      })
    );
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.all(calls).then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), this.opts.timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!timedOut) return;
    const ranForMs = performance.now() - started;
    const stalledRanks = ranks.map((_, i) => i).filter((i) => !done.has(i));
    const rank = stalledRanks[0] ?? 0;
    const pid = ranks[rank]?.pid;
    for (const i of stalledRanks) ranks[i].abort();
    // Give the aborted calls a moment to return (the kernel sees the call end), then tear the group down.
    await Promise.race([Promise.all(calls), new Promise((r) => setTimeout(r, ABORT_GRACE_MS).unref())]);
    const result = done.get(rank) ?? -1;
    this.timeouts++;
    const info: NcclTimeoutInfo = {
      group: this.opts.group,
      size: this.opts.size,
      rank,
      rankPod: rankPod(this.opts.group, rank),
      stalledRanks,
      collective: 'ncclAllReduce',
      seq,
      count,
      timeoutMs: this.opts.timeoutMs,
      ranForMs: Math.round(ranForMs),
      result,
      resultName: NCCL_RESULTS[result] ?? (result < 0 ? 'rank process gone' : `ncclResult_t ${result}`),
      ...(pid ? { pid } : {}),
      message: `[Rank ${rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=${seq}, OpType=ALLREDUCE, NumelIn=${count}, NumelOut=${count}, Timeout(ms)=${this.opts.timeoutMs}) ran for ${Math.round(ranForMs)} milliseconds before timing out.`,
    };
    this.opts.log.error({ group: info.group, rank, pod: info.rankPod, seq }, info.message);
    this.restart();
    throw new NcclTimeoutError(info);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    for (const r of this.ranks) r.stop();
    this.ranks = [];
  }

  private start(): void {
    this.seq = 0;
    this.ranks = Array.from({ length: this.opts.size }, (_, i) => this.opts.startRank(i));
    this.opts.onStart?.(this.ranks.map((r, i) => ({ rank: i, pod: rankPod(this.opts.group, i), pid: r.pid })));
  }

  private restart(): void {
    for (const r of this.ranks) r.stop();
    this.ranks = [];
    this.restarts++;
    this.restartingUntil = Date.now() + this.opts.restartMs;
    this.restartTimer = setTimeout(() => {
      this.restartingUntil = 0;
      if (!this.stopped) this.start();
    }, this.opts.restartMs);
    this.restartTimer.unref();
  }
}
