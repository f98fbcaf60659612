/**
 * Active and recent faults. Validates a request (allowed targets and kinds, magnitude range per kind), caps how many
 * are active at once (each can hold an nftables table or a timer), keeps each fault until its duration ends or it is
 * deleted, and publishes every one as a contract FaultAnnotation.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { FaultKind, FaultTarget, type FaultAnnotation } from '../../../../contract/faults';

export interface KindSpec {
  /** What `magnitude` means for this kind. */
  unit: string;
  min: number;
  max: number;
  /** Whether `min` itself is allowed. */
  minInclusive: boolean;
  default: number;
  /** Targets this kind applies to (undefined = every hop). */
  targets?: FaultTarget[];
}

export const KIND_SPECS: Record<FaultKind, KindSpec> = {
  latency: { unit: 'added milliseconds per request', min: 0, max: 60_000, minInclusive: false, default: 500 },
  error: { unit: 'probability a request fails with 500', min: 0, max: 1, minInclusive: false, default: 1 },
  timeout: {
    unit: 'probability a request hangs past the caller timeout',
    min: 0,
    max: 1,
    minInclusive: false,
    default: 1,
  },
  cpu_hog: { unit: 'CPU milliseconds burnt per request', min: 0, max: 5000, minInclusive: false, default: 40 },
  tls_slow_handshake: {
    unit: 'milliseconds added to each TLS handshake',
    min: 0,
    max: 30_000,
    minInclusive: false,
    default: 600,
  },
  gpu_oom: {
    unit: 'probability a KV/activation allocation fails',
    min: 0,
    max: 1,
    minInclusive: false,
    default: 0.6,
    targets: ['llm-vllm', 'llm-tgi', 'llm-sglang'],
  },
  kv_cache_thrash: {
    unit: 'fraction of KV-cache capacity left',
    min: 0,
    max: 1,
    minInclusive: false,
    default: 0.08,
    targets: ['llm-vllm', 'llm-tgi', 'llm-sglang'],
  },
  gpu_memory_leak: {
    unit: 'MiB per second of GPU memory allocated and never freed',
    min: 0,
    max: 65_536,
    minInclusive: false,
    default: 48,
    targets: ['llm-vllm', 'llm-tgi', 'llm-sglang'],
  },
  tcp_retransmit: {
    unit: 'percent of packets to the hop dropped (forcing retransmits)',
    min: 0,
    max: 50,
    minInclusive: false,
    default: 15,
  },
  nccl_timeout: {
    unit: "rank of the tensor-parallel group whose collective stalls (needs HOPSCOPE_TP ≥ 2; the group's last rank is used when higher)",
    min: 0,
    max: 7,
    minInclusive: true,
    default: 1,
    targets: ['llm-vllm', 'llm-tgi', 'llm-sglang'],
  },
};

export const DEFAULT_DURATION_S = 120;
/** Active faults at once, at most: more is a runaway script, not an experiment. */
export const MAX_ACTIVE_FAULTS = 64;

export class FaultError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message);
  }
}

export interface Fault extends FaultAnnotation {
  magnitude: number;
  durationS: number;
}

/** Emits `start` and `end` with the fault, so effects with side effects (nft rules) can follow. */
export class FaultRegistry extends EventEmitter {
  private readonly faults = new Map<string, Fault>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly recentLimit = 200;
  private starting = 0;

  constructor(
    private readonly pods: Record<string, string[]>,
    private readonly maxActive = MAX_ACTIVE_FAULTS
  ) {
    super();
  }

  /** How many faults are active now. */
  get activeCount(): number {
    let n = 0;
    for (const f of this.faults.values()) if (f.active) n++;
    return n;
  }

  /** Validates and normalises a request body; throws FaultError(400) with the allowed values. */
  parse(body: unknown): { target: FaultTarget; kind: FaultKind; magnitude: number; durationS: number; pod?: string } {
    if (!body || typeof body !== 'object')
      throw new FaultError(400, 'bad_request', 'expected a JSON object {target, kind, magnitude?, durationS?, pod?}');
    const b = body as Record<string, unknown>;
    const target = FaultTarget.safeParse(b.target);
    if (!target.success)
      throw new FaultError(
        400,
        'unknown_target',
        `unknown fault target ${JSON.stringify(b.target)}; allowed: ${FaultTarget.options.join(', ')}`
      );
    const kind = FaultKind.safeParse(b.kind);
    if (!kind.success)
      throw new FaultError(
        400,
        'unknown_kind',
        `unknown fault kind ${JSON.stringify(b.kind)}; allowed: ${FaultKind.options.join(', ')}`
      );
    const spec = KIND_SPECS[kind.data];
    if (spec.targets && !spec.targets.includes(target.data)) {
      throw new FaultError(
        400,
        'kind_not_applicable',
        `${kind.data} applies only to ${spec.targets.join(', ')}, not ${target.data}`
      );
    }
    let magnitude = spec.default;
    if (b.magnitude !== undefined && b.magnitude !== null) {
      const m = b.magnitude;
      const lowOk = typeof m === 'number' && (spec.minInclusive ? m >= spec.min : m > spec.min);
      if (typeof m !== 'number' || !Number.isFinite(m) || !lowOk || m > spec.max) {
        throw new FaultError(
          400,
          'magnitude_out_of_range',
          `magnitude for ${kind.data} is ${spec.unit}: must be ${spec.minInclusive ? '≥' : '>'} ${spec.min} and ≤ ${spec.max} (got ${JSON.stringify(m)})`
        );
      }
      magnitude = m;
    }
    let durationS = DEFAULT_DURATION_S;
    if (b.durationS !== undefined && b.durationS !== null) {
      const d = b.durationS;
      if (typeof d !== 'number' || !Number.isFinite(d) || d <= 0 || d > 3600) {
        throw new FaultError(
          400,
          'duration_out_of_range',
          `durationS must be > 0 and ≤ 3600 (got ${JSON.stringify(d)})`
        );
      }
      durationS = d;
    }
    let pod: string | undefined;
    if (b.pod !== undefined) {
      const pods = this.pods[target.data] ?? [];
      if (typeof b.pod !== 'string' || !pods.includes(b.pod)) {
        throw new FaultError(
          400,
          'unknown_pod',
          `unknown pod ${JSON.stringify(b.pod)} for ${target.data}; allowed: ${pods.join(', ')}`
        );
      }
      pod = b.pod;
    }
    return { target: target.data, kind: kind.data, magnitude, durationS, pod };
  }

  /** Starts a fault (after `beforeStart`, which may refuse it, e.g. tcp_retransmit where nft is unavailable). */
  async add(body: unknown, beforeStart?: (f: Fault) => Promise<string | void>): Promise<Fault> {
    const p = this.parse(body);
    if (this.activeCount + this.starting >= this.maxActive) {
      throw new FaultError(
        429,
        'too_many_faults',
        `at most ${this.maxActive} faults can be active at once (${this.activeCount} are): end some with DELETE /faults/:id or wait for them to expire`
      );
    }
    const now = Date.now();
    const fault: Fault = {
      id: `flt-${randomBytes(4).toString('hex')}`,
      target: p.target,
      kind: p.kind,
      magnitude: p.magnitude,
      durationS: p.durationS,
      startMs: now,
      active: true,
      ...(p.pod ? { pod: p.pod } : {}),
    };
    // Counted while beforeStart runs, so concurrent requests cannot overshoot the cap.
    this.starting++;
    let note: string | void;
    try {
      note = beforeStart ? await beforeStart(fault) : undefined;
    } finally {
      this.starting--;
    }
    if (note) fault.note = note;
    this.faults.set(fault.id, fault);
    this.timers.set(fault.id, setTimeout(() => this.end(fault.id), p.durationS * 1000).unref());
    this.emit('start', fault);
    this.trim();
    return fault;
  }

  /** Replica processes (split mode) mirror the control process's faults; the control process owns their timing. */
  mirror(f: Fault): void {
    if (this.faults.has(f.id)) return;
    this.faults.set(f.id, { ...f });
    this.emit('start', this.faults.get(f.id));
  }

  /** Ends a fault now; false when unknown or already ended. */
  end(id: string): boolean {
    const f = this.faults.get(id);
    if (!f || !f.active) return false;
    f.active = false;
    f.endMs = Date.now();
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.emit('end', f);
    return true;
  }

  get(id: string): Fault | undefined {
    return this.faults.get(id);
  }

  /** Active and recent faults, newest first, as annotations. */
  list(): FaultAnnotation[] {
    return [...this.faults.values()].sort((a, b) => b.startMs - a.startMs).map(({ durationS: _d, ...a }) => ({ ...a }));
  }

  /** The active fault of this kind hitting this pod, if any (strongest magnitude wins). */
  active(target: string, pod: string, kind: FaultKind): Fault | undefined {
    let best: Fault | undefined;
    for (const f of this.faults.values()) {
      if (
        f.active &&
        f.kind === kind &&
        f.target === target &&
        (!f.pod || f.pod === pod) &&
        (!best || f.magnitude > best.magnitude)
      )
        best = f;
    }
    return best;
  }

  /** All active faults on a hop replica. */
  activeOn(target: string, pod: string): Fault[] {
    return [...this.faults.values()].filter((f) => f.active && f.target === target && (!f.pod || f.pod === pod));
  }

  endAll(): void {
    for (const id of [...this.faults.keys()]) this.end(id);
  }

  private trim(): void {
    const ended = [...this.faults.values()].filter((f) => !f.active).sort((a, b) => a.startMs - b.startMs);
    while (ended.length > this.recentLimit) this.faults.delete(ended.shift()!.id);
  }
}
