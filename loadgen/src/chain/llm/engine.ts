/**
 * A continuous-batching inference engine, simulated: a waiting queue, a running batch of at most `maxNumSeqs`
 * sequences, a KV cache measured in blocks of tokens, a prefix cache, and an engine step whose duration comes from
 * the work in it — prefill time grows with the uncached prompt tokens admitted, decode time with the batch size.
 * When the KV cache overflows, the newest sequence is preempted (recomputed later), as vLLM does. Faults plug in
 * through `kvFactor` (kv_cache_thrash shrinks the usable cache and evicts the prefix cache) and `oomProbability`
 * (gpu_oom makes the allocation at admission fail). Every admission's KV allocation can go to a real driver call
 * (`gpuAlloc`: the stand-in libcuda.so.1), so the kernel sees the allocations and their failures. A tensor-parallel
 * replica's step ends only once its ranks' collective has (`collective`); a collective that fails (the group's NCCL
 * watchdog) kills the engine as vLLM's dies: every running and waiting sequence fails with it.
 * (gpu_oom makes the allocation at admission fail). GPU memory held outside the KV cache (`leakedBytes`, set by the
 * gpu_memory_leak fault) is taken from the cache's pool (`kvPoolBytes`): the usable cache shrinks with it (more queueing,
 * more preemption), and a sequence that no longer fits even in an empty engine fails its allocation (GPU OOM).
 * Every admission's KV allocation can go to a real driver call (`gpuAlloc`: the stand-in libcuda.so.1), so the kernel
 * sees the allocations and their failures.
 */
import { EventEmitter } from 'node:events';
import type { ModelSpec } from './models';

export interface EngineOptions {
  maxNumSeqs: number;
  kvCapacityTokens: number;
  blockSize: number;
  stepOverheadMs: number;
  prefillMsPerToken: number;
  decodeBaseMs: number;
  decodeMsPerSeq: number;
  maxQueue: number;
  prefixCacheEntries: number;
  scale: (ms: number) => number;
  rand: () => number;
  kvFactor: () => number;
  /** Bytes of GPU memory the KV cache may use at full capacity; memory held elsewhere (`leakedBytes`) comes out of it. */
  kvPoolBytes: number;
  /** Probability an allocation for this model fails now (gpu_oom); lighter models need less memory. */
  oomProbability: (model: ModelSpec) => number;
  /** Makes the admission's KV allocation of `bytes` in the CUDA driver (failing when `fail`); resolves with the
   *  CUresult once made. A failed sequence hears of its error only then, inside its request's window. */
  gpuAlloc?: (bytes: number, fail: boolean) => Promise<number> | undefined;
  /** The step's collective across the tensor-parallel ranks (`seqs` sequences in the step); a rejection fails every
   *  sequence in the engine with `engine_dead` (the error is kept as the EngineError's `cause`). */
  collective?: (seqs: number) => Promise<void>;
}

export const ENGINE_DEFAULTS: Omit<
  EngineOptions,
  'scale' | 'rand' | 'kvFactor' | 'oomProbability' | 'gpuAlloc' | 'collective'
> = {
  maxNumSeqs: 32,
  kvCapacityTokens: 32_768,
  blockSize: 16,
  stepOverheadMs: 3,
  prefillMsPerToken: 0.04,
  decodeBaseMs: 8,
  decodeMsPerSeq: 0.35,
  maxQueue: 1024,
  prefixCacheEntries: 512,
  // 32,768 tokens × 128 KiB (Llama-3 8B's KV bytes per token, models.ts) = 4 GiB.
  kvPoolBytes: 32_768 * 2 * 32 * 8 * 128 * 2,
};

/** vLLM's EngineDeadError message (vllm/v1/engine/exceptions.py, vllm-project/vllm commit
 *  f218d64df6eaf87025d7673b7a515f1561fac80f). */
export const ENGINE_DEAD_MESSAGE = 'EngineCore encountered an issue. See stack trace (above) for the root cause.';
/**
 * The limits an operator sets on the engine, named as vLLM names them (vllm/engine/arg_utils.py EngineArgs, read at
 * vllm-project/vllm main: `--max-num-seqs`, `--num-gpu-blocks-override` with `--block-size` 16): `maxNumSeqs` caps the
 * running batch (SGLang's `--max-running-requests`, TGI's batch size), `numGpuBlocks` sizes the KV cache in blocks of
 * `blockSize` tokens. Unset = the backend's simulated default (vLLM/SGLang 32 sequences, TGI 24; 2,048 blocks).
 */
export interface EngineLimits {
  maxNumSeqs?: number;
  numGpuBlocks?: number;
}

/** The engine options of a backend: its simulated defaults, then the operator's limits. */
export function engineOptionsFor(
  backend: 'vllm' | 'tgi' | 'sglang',
  limits: EngineLimits = {}
): typeof ENGINE_DEFAULTS {
  const o = {
    ...ENGINE_DEFAULTS,
    // TGI's router batches a little differently: smaller max batch, slightly cheaper steps.
    ...(backend === 'tgi' ? { maxNumSeqs: 24, decodeBaseMs: 7, decodeMsPerSeq: 0.45 } : {}),
  };
  if (limits.maxNumSeqs !== undefined) o.maxNumSeqs = limits.maxNumSeqs;
  if (limits.numGpuBlocks !== undefined) o.kvCapacityTokens = limits.numGpuBlocks * o.blockSize;
  return o;
}

export class EngineError extends Error {
  /** gpu_oom: the CUresult the driver call returned (absent when no driver call was made). */
  cudaResult?: number;
  /** gpu_oom: the bytes the failed allocation asked for. */
  bytes?: number;
  constructor(
    readonly code: 'gpu_oom' | 'overloaded' | 'aborted' | 'engine_dead',
    message: string
  ) {
    super(message);
  }
}

export interface SeqRequest {
  model: ModelSpec;
  promptTokens: number;
  /** Identifies the shared prefix (system prompt + context) for the prefix cache. */
  prefixKey: string;
  prefixTokens: number;
  maxTokens: number;
  /** Tokens the model "wants" to write; finish reason is `stop` when < maxTokens, else `length`. */
  targetTokens: number;
}

export interface SeqResult {
  finishReason: 'stop' | 'length';
  promptTokens: number;
  outputTokens: number;
  cachedTokens: number;
  preemptions: number;
  arrivalMs: number;
  scheduledMs: number;
  firstTokenMs: number;
  endMs: number;
  /** Every token's emission time (performance.now() ms). */
  tokenTimes: number[];
  maxBatch: number;
}

export interface SeqHandlers {
  onToken(index: number, at: number): void;
  onDone(r: SeqResult): void;
  onError(e: EngineError): void;
}

export interface StepInfo {
  prefillTokens: number;
  prefillSeqs: number;
  decodeSeqs: number;
  durationMs: number;
}

class Seq {
  generated = 0;
  kv = 0;
  cached = 0;
  preemptions = 0;
  scheduledMs = 0;
  firstTokenMs = 0;
  maxBatch = 0;
  readonly tokenTimes: number[] = [];
  constructor(
    readonly id: number,
    readonly req: SeqRequest,
    readonly h: SeqHandlers,
    readonly arrivalMs: number
  ) {}
  get done(): boolean {
    return this.generated >= this.req.targetTokens;
  }
}

export class InferenceEngine extends EventEmitter {
  private readonly waiting: Seq[] = [];
  private readonly running: Seq[] = [];
  private readonly prefix = new Map<string, number>();
  private busy = false;
  private nextId = 0;
  private kvUsed = 0;
  private closed = false;
  /** Real milliseconds spent in engine steps (for GPU activity). */
  busyMsTotal = 0;
  lastBatchSize = 0;
  prefixQueries = 0;
  prefixHits = 0;
  preemptions = 0;
  oomFailures = 0;
  /** Sequences failed by a failed collective (engine_dead). */
  deadFailures = 0;
  /** GPU memory held outside the KV cache by the process (gpu_memory_leak), in bytes: it shrinks the usable cache. */
  leakedBytes = 0;

  constructor(readonly opts: EngineOptions) {
    super();
  }

  get numRunning(): number {
    return this.running.length;
  }
  get numWaiting(): number {
    return this.waiting.length;
  }
  get capacityTokens(): number {
    return Math.max(
      this.opts.blockSize,
      Math.floor(this.opts.kvCapacityTokens * this.opts.kvFactor() * (1 - this.leakedFraction))
    );
  }
  /** 0..1 of the KV cache's pool held by memory allocated elsewhere in the process (gpu_memory_leak). */
  get leakedFraction(): number {
    return this.leakedBytes > 0 ? Math.min(1, this.leakedBytes / this.opts.kvPoolBytes) : 0;
  }
  /** 0..1 of the usable KV cache in use. */
  get kvUsage(): number {
    return Math.min(1, this.kvUsed / this.capacityTokens);
  }
  runningBy(model: string): number {
    return this.running.filter((s) => s.req.model.id === model).length;
  }
  waitingBy(model: string): number {
    return this.waiting.filter((s) => s.req.model.id === model).length;
  }

  submit(req: SeqRequest, h: SeqHandlers): () => void {
    if (this.closed) throw new EngineError('aborted', 'engine stopped');
    if (this.waiting.length >= this.opts.maxQueue)
      throw new EngineError('overloaded', `queue full (${this.opts.maxQueue} waiting)`);
    const s = new Seq(this.nextId++, req, h, performance.now());
    this.waiting.push(s);
    this.kick();
    // Abort: the client went away; free the sequence's place.
    return () => {
      const wi = this.waiting.indexOf(s);
      if (wi >= 0) this.waiting.splice(wi, 1);
      const ri = this.running.indexOf(s);
      if (ri >= 0) {
        this.running.splice(ri, 1);
        this.kvUsed -= s.kv;
        s.kv = 0;
      }
    };
  }

  stop(): void {
    this.closed = true;
    for (const s of [...this.waiting, ...this.running]) s.h.onError(new EngineError('aborted', 'engine stopped'));
    this.waiting.length = 0;
    this.running.length = 0;
  }

  private blocks(tokens: number): number {
    return Math.ceil(tokens / this.opts.blockSize) * this.opts.blockSize;
  }

  private kick(): void {
    if (this.busy || this.closed || (!this.running.length && !this.waiting.length)) return;
    this.busy = true;
    setImmediate(() => this.step());
  }

  private step(): void {
    const o = this.opts;
    const cap = this.capacityTokens;
    const thrashing = o.kvFactor() < 1;
    if (thrashing) this.prefix.clear(); // thrash: the prefix cache is evicted as fast as it fills
    const admitted: Seq[] = [];
    while (this.waiting.length && this.running.length + admitted.length < o.maxNumSeqs) {
      const s = this.waiting[0];
      const need = this.blocks(s.req.promptTokens + s.generated + 1);
      if (this.kvUsed + need > cap && this.running.length + admitted.length > 0) break;
      this.waiting.shift();
      const oomP = o.oomProbability(s.req.model);
      // Nothing else runs and it still does not fit: the leaked memory left no room for it.
      const squeezed = this.leakedBytes > 0 && this.kvUsed + need > cap;
      const fail = squeezed || (oomP > 0 && o.rand() < oomP);
      const bytes = need * s.req.model.kvBytesPerToken;
      const driverCall = o.gpuAlloc?.(bytes, fail);
      if (fail) {
        this.oomFailures++;
        const held = squeezed ? `; ${(this.leakedBytes / 2 ** 30).toFixed(2)} GiB held outside the KV cache` : '';
        const err = new EngineError(
          'gpu_oom',
          `CUDA out of memory: tried to allocate ${Math.round(bytes / 2 ** 20)} MiB for ${need} KV tokens${held}`
        );
        err.bytes = bytes;
        if (driverCall)
          void driverCall.then((r) => {
            if (r >= 0) err.cudaResult = r;
            s.h.onError(err);
          });
        else s.h.onError(err);
        continue;
      }
      if (s.generated === 0) {
        const hit = this.prefix.has(s.req.prefixKey);
        s.cached = hit ? Math.min(s.req.prefixTokens, s.req.promptTokens - 1) : 0;
        this.prefixQueries += s.req.promptTokens;
        this.prefixHits += s.cached;
        this.prefix.delete(s.req.prefixKey);
        if (!thrashing) this.prefix.set(s.req.prefixKey, s.req.prefixTokens);
        if (this.prefix.size > o.prefixCacheEntries) this.prefix.delete(this.prefix.keys().next().value!);
        s.scheduledMs = performance.now();
      } else {
        s.cached = 0; // recompute after preemption
      }
      s.kv = need;
      this.kvUsed += need;
      admitted.push(s);
    }
    const decoding = [...this.running];
    const prefillTokens = admitted.reduce((n, s) => n + s.req.promptTokens + s.generated - s.cached, 0);
    const pf = Math.max(0, ...admitted.map((s) => s.req.model.prefill));
    const df = Math.max(0, ...decoding.map((s) => s.req.model.decode));
    const simMs =
      o.stepOverheadMs +
      prefillTokens * o.prefillMsPerToken * pf +
      (decoding.length ? o.decodeBaseMs * df + o.decodeMsPerSeq * decoding.length : 0);
    const realMs = o.scale(simMs);
    const started = performance.now();
    this.lastBatchSize = decoding.length + admitted.length;
    const info: StepInfo = {
      prefillTokens,
      prefillSeqs: admitted.length,
      decodeSeqs: decoding.length,
      durationMs: realMs,
    };
    const done = (): void => {
      this.busyMsTotal += performance.now() - started;
      this.complete(admitted, decoding);
      this.emit('step', info);
      this.busy = false;
      this.kick();
    };
    const collective = this.lastBatchSize && o.collective ? o.collective(this.lastBatchSize) : undefined;
    if (collective) {
      const timer = new Promise<void>((r) => (realMs < 0.5 ? setImmediate(r) : setTimeout(r, realMs)));
      Promise.all([timer, collective]).then(done, (err: unknown) => this.die(err, admitted));
    } else if (realMs < 0.5) setImmediate(done);
    else setTimeout(done, realMs);
  }

  /** The step's collective failed: the engine dies with every sequence in it (vLLM's EngineDeadError). */
  private die(cause: unknown, admitted: Seq[]): void {
    const all = [...admitted, ...this.running, ...this.waiting];
    this.running.length = 0;
    this.waiting.length = 0;
    this.kvUsed = 0;
    this.prefix.clear();
    this.busy = false;
    for (const s of all) {
      s.kv = 0;
      this.deadFailures++;
      const err = new EngineError('engine_dead', ENGINE_DEAD_MESSAGE);
      err.cause = cause;
      s.h.onError(err);
    }
    this.kick();
  }

  private emitToken(s: Seq, now: number): void {
    if (s.generated === 0 && !s.firstTokenMs) s.firstTokenMs = now;
    s.generated++;
    s.tokenTimes.push(now);
    s.maxBatch = Math.max(s.maxBatch, this.running.length);
    s.h.onToken(s.generated - 1, now);
  }

  private complete(admitted: Seq[], decoding: Seq[]): void {
    const now = performance.now();
    if (this.closed) return;
    this.running.push(...admitted);
    const live = new Set(this.running);
    for (const s of [...admitted, ...decoding]) {
      if (!live.has(s)) continue; // aborted meanwhile
      this.emitToken(s, now);
      const grown = this.blocks(s.req.promptTokens + s.generated + 1);
      this.kvUsed += grown - s.kv;
      s.kv = grown;
    }
    for (const s of [...this.running]) {
      if (!s.done) continue;
      this.running.splice(this.running.indexOf(s), 1);
      this.kvUsed -= s.kv;
      s.kv = 0;
      s.h.onDone({
        finishReason: s.req.targetTokens < s.req.maxTokens ? 'stop' : 'length',
        promptTokens: s.req.promptTokens,
        outputTokens: s.generated,
        cachedTokens: s.cached,
        preemptions: s.preemptions,
        arrivalMs: s.arrivalMs,
        scheduledMs: s.scheduledMs,
        firstTokenMs: s.firstTokenMs,
        endMs: now,
        tokenTimes: s.tokenTimes,
        maxBatch: s.maxBatch,
      });
    }
    // KV overflow: preempt the newest running sequences until the rest fit (they are recomputed when readmitted).
    while (this.kvUsed > this.capacityTokens && this.running.length > 1) {
      const victim = this.running.pop()!;
      this.kvUsed -= victim.kv;
      victim.kv = 0;
      victim.preemptions++;
      this.preemptions++;
      this.waiting.unshift(victim);
      this.emit('preempt');
    }
  }
}
