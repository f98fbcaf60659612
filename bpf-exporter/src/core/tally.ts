/**
 * Node's side of the kernel counts (core/kit.ts): turns each flushed generation into exact increments, without
 * counting twice the events whose records already arrived.
 *
 * A record is counted at once (so an event visible in /events is already in /metrics, as before) and remembered under
 * its epoch and tally key. When the kernel's count for that epoch arrives, only the remainder (count − records already
 * counted) is added: the events of that key the budget suppressed. A record arriving after its epoch was flushed
 * (perf buffers of different CPUs are read in no fixed order) is not counted again: the flush included it.
 */
import type { KernelEventType } from '../../../contract';
import { bucketOf, SUPPRESSED_MAP, typeOfCode, type TallyHit, type TallySpec } from './kit';

export interface TallyDelta {
  tally: string;
  type: KernelEventType;
  pid: number;
  cgroupId: number;
  /** Dims after pid and cgroup id, the bucket index last for a histogram. */
  dims: number[];
  count: number;
  sumNs: number;
}

export interface SuppressedEntry {
  /** Kernel monotonic second the events were suppressed in. */
  second: number;
  type: KernelEventType;
  /** Suppressed from the notable class's budget. */
  notable: boolean;
  pid: number;
  cgroupId: number;
  count: number;
}

export interface FlushResult {
  epoch: number;
  deltas: TallyDelta[];
  suppressed: SuppressedEntry[];
  inferred: boolean;
}

interface Acc {
  count: number;
  sumNs: number;
}

const MAP_NAME = /^@(t|ts)_(\w+)_([01])$/;

export class TallyReconciler {
  private lastFlushed = -1;
  private readonly pending = new Map<number, Map<string, Acc>>();
  private open?: {
    epoch: number;
    inferred: boolean;
    counts: Map<string, number>;
    sums: Map<string, number>;
    suppressed: SuppressedEntry[];
  };
  private readonly specs = new Map<string, TallySpec>();

  constructor(tallies: TallySpec[] = []) {
    for (const t of tallies) this.specs.set(t.name, t);
  }

  /** Full kernel key of a record's tally hit, as bpftrace prints it ("pid,cg,dims…[,bucket]"). */
  keyOf(pid: number, cgroupId: number, hit: TallyHit): { key: string; dims: number[] } {
    const spec = this.specs.get(hit.name);
    const dims = spec?.bucketsNs ? [...hit.dims, bucketOf(spec.bucketsNs, hit.valueNs ?? 0)] : hit.dims;
    return { key: `${hit.name}|${[pid, cgroupId, ...dims].join(',')}`, dims };
  }

  /**
   * A record of `epoch` counted under `hit`: true when it must be counted now (its epoch is not flushed yet), false
   * when the flush of its epoch already included it.
   */
  record(epoch: number, pid: number, cgroupId: number, hit: TallyHit): boolean {
    if (epoch <= this.lastFlushed) return false;
    let m = this.pending.get(epoch);
    if (!m) {
      m = new Map();
      this.pending.set(epoch, m);
    }
    const { key } = this.keyOf(pid, cgroupId, hit);
    const a = m.get(key);
    if (a) {
      a.count++;
      a.sumNs += hit.valueNs ?? 0;
    } else m.set(key, { count: 1, sumNs: hit.valueNs ?? 0 });
    return true;
  }

  /** `{"bx":"flush","e":N}`: the maps of epoch N follow. Returns a flush left open by a lost end marker, if any. */
  begin(epoch: number): FlushResult | undefined {
    const prev = this.open ? this.finish() : undefined;
    this.open = { epoch, inferred: false, counts: new Map(), sums: new Map(), suppressed: [] };
    return prev;
  }

  /** One printed map (`{"@name": {"k1,k2": v}}`); true when it was one of the kit's. */
  map(name: string, data: unknown): boolean {
    const m = MAP_NAME.exec(name);
    const sup = SUPPRESSED_MAP.test(name);
    if (!m && !sup) return false;
    if (!data || typeof data !== 'object') return true;
    // A begin marker lost with the perf buffer: the next epoch not flushed yet (its generation says which parity).
    if (!this.open) {
      const gen = Number(name.slice(-1));
      let e = this.lastFlushed + 1;
      if ((e & 1) !== gen) e++;
      this.open = { epoch: e, inferred: true, counts: new Map(), sums: new Map(), suppressed: [] };
    }
    const o = this.open;
    for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
      const n = typeof v === 'number' ? v : Number(v);
      if (!Number.isFinite(n) || n === 0) continue;
      if (sup) {
        const [second, code, cls, pid, cg] = k.split(',').map(Number);
        const type = typeOfCode(code);
        if (type) o.suppressed.push({ second, type, notable: cls === 1, pid, cgroupId: cg, count: n });
      } else {
        const key = `${m![2]}|${k}`;
        const target = m![1] === 't' ? o.counts : o.sums;
        target.set(key, (target.get(key) ?? 0) + n);
      }
    }
    return true;
  }

  /** `{"bx":"end","e":N}`: the flush of epoch N is complete. */
  end(epoch: number): FlushResult | undefined {
    if (!this.open) {
      this.lastFlushed = Math.max(this.lastFlushed, epoch);
      this.prune();
      return undefined;
    }
    if (this.open.epoch !== epoch && !this.open.inferred) this.open.epoch = Math.max(this.open.epoch, epoch);
    return this.finish();
  }

  /** Closes a flush whose end marker never came (bpftrace exited or the marker was lost). */
  close(): FlushResult | undefined {
    return this.open ? this.finish() : undefined;
  }

  private finish(): FlushResult {
    const o = this.open!;
    this.open = undefined;
    const pending = this.pending.get(o.epoch);
    const deltas: TallyDelta[] = [];
    for (const [key, n] of o.counts) {
      const bar = key.indexOf('|');
      const tally = key.slice(0, bar);
      const spec = this.specs.get(tally);
      if (!spec) continue;
      const p = pending?.get(key);
      const count = n - (p?.count ?? 0);
      if (count <= 0) continue; // a map that was full missed keys its records still counted
      const sumNs = (o.sums.get(key) ?? 0) - (p?.sumNs ?? 0);
      const [pid, cg, ...dims] = key
        .slice(bar + 1)
        .split(',')
        .map(Number);
      deltas.push({ tally, type: spec.type, pid, cgroupId: cg, dims, count, sumNs: Math.max(0, sumNs) });
    }
    this.lastFlushed = Math.max(this.lastFlushed, o.epoch);
    this.prune();
    return { epoch: o.epoch, deltas, suppressed: o.suppressed, inferred: o.inferred };
  }

  private prune(): void {
    for (const e of this.pending.keys()) if (e <= this.lastFlushed) this.pending.delete(e);
  }

  /** Epochs with records not yet reconciled (for /health and tests). */
  get pendingEpochs(): number {
    return this.pending.size;
  }
}
