/**
 * The root-cause engine off the event loop: a few worker threads (./rca-worker.ts) run `rankTrace`/`rankWindow` (and
 * the parsing of large bodies before them) so a large or hostile trace costs a worker's time, never the proxy's:
 * health, /metrics, OTLP ingest, heartbeats and lease renewals keep answering while the engine works. Jobs wait in a
 * bounded queue; past it, 503 with Retry-After (the caller retries, nothing piles up in memory). A worker that dies
 * fails its job and is replaced. Workers start on first use and do not keep the process alive while idle.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Span } from '../../../contract';
import { busy, DomainError, invalid, stopping, type DomainErrorKind } from '../domain/errors';
import { rcaPoolQueued, rcaPoolRefused } from '../metrics';
import { OtlpBodyError, type OtlpEncoding } from '../otlp/parse-body';
import type { RankTraceInput, RankWindowInput, RcaConfigInput, TraceRcaAnswer, WindowRcaAnswer } from '../rca';

export type RcaJob =
  | { id: number; kind: 'trace'; input: RankTraceInput }
  | { id: number; kind: 'window'; input: RankWindowInput }
  | { id: number; kind: 'window-body'; body: ArrayBuffer; config?: RcaConfigInput }
  | { id: number; kind: 'otlp'; body: ArrayBuffer; encoding: OtlpEncoding };

export type RcaJobResult =
  | { id: number; answer: TraceRcaAnswer | WindowRcaAnswer; chunks?: undefined; error?: undefined }
  | { id: number; chunks: ArrayBuffer[]; answer?: undefined; error?: undefined }
  | {
      id: number;
      answer?: undefined;
      chunks?: undefined;
      error: {
        name: string;
        message: string;
        kind?: DomainErrorKind;
        code?: string;
        details?: unknown;
        retryAfterS?: number;
      };
    };

export interface RcaPoolOptions {
  /** Worker threads (default: the cores less one, 1 to 4). */
  workers?: number;
  /** Jobs waiting for a worker beyond those running; past it, 503 (default 16). */
  queue?: number;
}

interface Pending {
  job: RcaJob;
  transfer: ArrayBuffer[];
  resolve: (r: RcaJobResult) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
}

/**
 * A worker on the engine's entry: the image's bundle beside main.mjs, else (development, tests: this module runs under
 * tsx) the TypeScript source, loaded through tsx's loader registered in the worker itself (a loader registered in this
 * thread does not reach workers).
 */
function newWorker(): Worker {
  const built = new URL('./rca-worker.mjs', import.meta.url);
  if (existsSync(fileURLToPath(built))) return new Worker(built, { name: 'hopscope-rca' });
  const source = new URL('./rca-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(boot, { eval: true, name: 'hopscope-rca', execArgv: [] });
}

/** A buffer's bytes as an ArrayBuffer of their own (to transfer to a worker without copying again). */
function own(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

export class RcaPool {
  readonly size: number;
  readonly queueBound: number;
  private slots: Slot[] = [];
  private waiting: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: RcaPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.workers ?? Math.min(4, Math.max(1, availableParallelism() - 1))));
    this.queueBound = Math.max(0, Math.floor(opts.queue ?? 16));
  }

  async rankTrace(input: RankTraceInput): Promise<TraceRcaAnswer> {
    return (await this.submit({ id: this.nextId++, kind: 'trace', input })).answer as TraceRcaAnswer;
  }

  async rankWindow(input: RankWindowInput): Promise<WindowRcaAnswer> {
    return (await this.submit({ id: this.nextId++, kind: 'window', input })).answer as WindowRcaAnswer;
  }

  /** POST /api/rca's raw JSON body, parsed, checked (400s) and ranked in the worker. */
  async rankWindowBody(body: Buffer, config: RcaConfigInput | undefined): Promise<WindowRcaAnswer> {
    const buf = own(body);
    const r = await this.submit({ id: this.nextId++, kind: 'window-body', body: buf, config }, [buf]);
    return r.answer as WindowRcaAnswer;
  }

  /** An OTLP body checked and parsed in the worker; its spans in chunks, unpacked one per turn of the event loop. */
  async parseOtlp(body: Buffer, encoding: OtlpEncoding): Promise<Span[][]> {
    const buf = own(body);
    const r = await this.submit({ id: this.nextId++, kind: 'otlp', body: buf, encoding }, [buf]);
    const chunks: Span[][] = [];
    for (const c of r.chunks ?? []) {
      chunks.push(deserialize(new Uint8Array(c)) as Span[]);
      await tick();
    }
    return chunks;
  }

  /** Starts one worker ahead of the first job (its code loads while nothing waits on it). */
  warm(): void {
    if (!this.closed && !this.slots.length) this.spawn();
  }

  /** Jobs running and waiting now. */
  load(): { running: number; waiting: number } {
    return { running: this.slots.filter((s) => s.busy).length, waiting: this.waiting.length };
  }

  private submit(job: RcaJob, transfer: ArrayBuffer[] = []): Promise<RcaJobResult> {
    if (this.closed) return Promise.reject(stopping());
    const idle = this.idleSlot();
    if (!idle && this.waiting.length >= this.queueBound) {
      rcaPoolRefused.inc();
      return Promise.reject(
        busy(
          `root cause: ${this.size} job(s) running and ${this.waiting.length} waiting (the engine's queue bound); retry shortly`,
          2
        )
      );
    }
    return new Promise<RcaJobResult>((resolve, reject) => {
      const p: Pending = { job, transfer, resolve, reject };
      if (idle) this.start(idle, p);
      else {
        this.waiting.push(p);
        rcaPoolQueued.set(this.waiting.length);
      }
    }).then((r) => {
      if (!r.error) return r;
      const e = r.error;
      if (e.name === 'DomainError' && e.kind)
        throw new DomainError(e.kind, e.message, { code: e.code, details: e.details, retryAfterS: e.retryAfterS });
      if (e.name === 'RcaConfigError') throw invalid(e.message);
      if (e.name === 'OtlpBodyError') throw new OtlpBodyError(e.message);
      throw new Error(`root cause: ${e.message}`);
    });
  }

  private idleSlot(): Slot | undefined {
    const free = this.slots.find((s) => !s.busy);
    if (free) return free;
    return this.slots.length < this.size ? this.spawn() : undefined;
  }

  private spawn(): Slot {
    const worker = newWorker();
    const slot: Slot = { worker };
    worker.unref();
    worker.on('message', (r: RcaJobResult) => {
      const p = slot.busy;
      if (!p || p.job.id !== r.id) return;
      slot.busy = undefined;
      p.resolve(r);
      this.next(slot);
    });
    const fail = (err: Error): void => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      const p = slot.busy;
      slot.busy = undefined;
      p?.reject(new Error(`root cause: the engine's worker stopped (${err.message})`));
      // Waiting jobs get a fresh worker.
      if (!this.closed && this.waiting.length) this.next(this.spawn());
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.slots.includes(slot)) fail(new Error(`exit code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, p: Pending): void {
    slot.busy = p;
    slot.worker.ref();
    try {
      slot.worker.postMessage(p.job, p.transfer);
    } catch (err) {
      slot.busy = undefined;
      p.reject(new Error(`root cause: the input could not be handed to the engine (${(err as Error).message})`));
      this.next(slot);
    }
  }

  private next(slot: Slot): void {
    const p = this.waiting.shift();
    rcaPoolQueued.set(this.waiting.length);
    if (p) this.start(slot, p);
    else slot.worker.unref();
  }

  /** Ends every worker; jobs still waiting or running fail with 503. */
  async close(): Promise<void> {
    this.closed = true;
    const refused = stopping();
    for (const p of this.waiting.splice(0)) p.reject(refused);
    const slots = this.slots.splice(0);
    for (const s of slots) {
      s.busy?.reject(refused);
      s.busy = undefined;
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
