/**
 * What a probe module is: its bpftrace program, what it needs from the machine, a parser of its printf lines, and its
 * metrics. The core runs any probe through this interface and knows nothing probe-specific (ebpf_exporter's model).
 */
import type { Registry } from 'prom-client';
import type { KernelEvent, KernelEventType } from '../../../contract';
import type { Kit } from './kit';

/** Options every probe may read; each probe takes what it needs. */
export interface ProbeOptions {
  /** Binary whose TLSWrap/SSL_write symbols Node probes attach to (defaults to this node). */
  nodeBinary: string;
  /** OpenSSL 3 shared libraries for non-Node TLS users. */
  libssl: string[];
  /** CUDA driver library whose allocation entry points are watched. */
  libcuda: string;
  /** 1 in N HTTP requests has its traceparent read (1 = every request). */
  traceparentSampleEvery: number;
  /** The exporter's own pid, excluded where a probe would otherwise see the exporter itself. */
  selfPid: number;
}

/**
 * A count the probe keeps in the kernel (exact whatever the per-event budget lets through): a bpftrace count map keyed
 * by [pid, cgroup id, ...dims], plus a sum map of the value in ns when `bucketsNs` makes it a histogram (the bucket
 * index is the last key). Flushed by the core every HOPSCOPE_BPF_FLUSH_MS (see core/kit.ts).
 */
export interface TallySpec {
  /** Map stem: letters, digits, underscore. */
  name: string;
  /** The event type each counted occurrence is (feeds hopscope_bpf_events_total). */
  type: KernelEventType;
  /** Names of the dimensions after pid and cgroup id (documentation and arity check). */
  dims: string[];
  /** Histogram upper bounds in ns (ascending); bucket index = how many bounds the value exceeds. */
  bucketsNs?: number[];
}

/** What one kernel event added to a tally: the record carries it so Node can count it at once (see core/tally.ts). */
export interface TallyHit {
  name: string;
  dims: number[];
  /** The value (ns) for a histogram tally. */
  valueNs?: number;
}

/** Something the probe needs before bpftrace is worth starting; checked up front so /health can say exactly why. */
export type Requirement =
  | { kind: 'tracepoint'; category: string; name: string }
  | { kind: 'file'; path: string; what: string }
  | { kind: 'symbol'; path: string; symbols: string[]; anyOf?: boolean };

/** A probe's parse result: the event without attribution (the core adds pod/namespace/node/traceId and `mode`). */
export interface RawEvent {
  type: KernelEventType;
  /** Monotonic kernel time (bpf `nsecs`) of the event; the core converts it to epoch ms. */
  nsecs?: bigint;
  pid: number;
  comm: string;
  /** cgroup v2 id the event belongs to (the socket's, for softirq-context TCP events). */
  cgroupId?: number;
  durationMs?: number;
  /** A W3C trace id seen by this event itself (http_traceparent). */
  traceId?: string;
  detail: Record<string, unknown>;
  /** Flush epoch the kernel counted this event in (printed by kit.event as "e"). */
  epoch?: number;
  /** The tally this event was counted in, when the probe keeps one. */
  tally?: TallyHit;
}

export type FoundSymbols = Record<string, string[]>;

/** Labels a kernel count is attributed to. */
export type PodLabelValues = Record<(typeof POD_LABELS)[number], string>;

export interface ProbeMetrics {
  /** Record-driven metrics (probes without tallies, e.g. http_traceparent). */
  observe?(event: KernelEvent): void;
  /**
   * Adds `count` occurrences of a tally key (dims after pid/cgroup) to the probe's metrics; for a histogram tally,
   * `sumNs` is their total value and dims' last entry the bucket index.
   */
  add?(tally: string, dims: number[], count: number, sumNs: number, labels: PodLabelValues): void;
}

export interface ProbeModule {
  name: string;
  /** One line for /health and --help. */
  description: string;
  /** Counts kept in the kernel (exact); a probe without tallies counts from its records. */
  tallies?: TallySpec[];
  /** Not started unless asked for (expensive probes). */
  optIn?: boolean;
  requirements(opts: ProbeOptions): Requirement[];
  /**
   * `found` holds, per library path of a `symbol` requirement, the symbols that library really exports; `kit` emits
   * the counting, per-event budget and flush code every probe shares (core/kit.ts).
   */
  program(opts: ProbeOptions, found: FoundSymbols, kit: Kit): string;
  /** Extra environment for this probe's bpftrace (e.g. BPFTRACE_STRLEN). */
  env?: Record<string, string>;
  /** `line` is one printf line of the probe (most probes print JSON); null when the line is not an event. */
  parse(line: string): RawEvent | null;
  metrics(registry: Registry): ProbeMetrics;
}

/** Labels every probe metric carries, so Prometheus joins kernel evidence to pods. */
export const POD_LABELS = ['pod', 'namespace', 'node'] as const;

/**
 * prom-client hashes the label object on every observation; at thousands of events/s that shows. This keeps one
 * child per label set (bounded: past `max` sets it falls back to the uncached call).
 */
export function labelCache<C>(metric: { labels(labels: Record<string, string>): C }, max = 10_000): (labels: Record<string, string>) => C {
  const children = new Map<string, C>();
  return (labels) => {
    const key = Object.values(labels).join('\u0000');
    let c = children.get(key);
    if (!c) {
      c = metric.labels(labels);
      if (children.size < max) children.set(key, c);
    }
    return c;
  };
}

export function podLabels(e: KernelEvent): PodLabelValues {
  return { pod: e.pod ?? '', namespace: e.namespace ?? '', node: e.node ?? '' };
}

/** Decodes a probe's JSON printf line; throws on a malformed line (the core counts those). */
export function json(line: string): Record<string, unknown> {
  const v: unknown = JSON.parse(line);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('probe line is not a JSON object');
  return v as Record<string, unknown>;
}

/** bpftrace prints u64 values as JSON numbers; big ones lose precision, so probes print them as strings. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
}
export function big(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}
export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

export const TCP_STATES: Record<number, string> = {
  1: 'ESTABLISHED', 2: 'SYN_SENT', 3: 'SYN_RECV', 4: 'FIN_WAIT1', 5: 'FIN_WAIT2', 6: 'TIME_WAIT', 7: 'CLOSE',
  8: 'CLOSE_WAIT', 9: 'LAST_ACK', 10: 'LISTEN', 11: 'CLOSING', 12: 'NEW_SYN_RECV',
};

/**
 * Adds `count` observations totalling `sumNs` that the kernel put in histogram bucket `bucket` (index into
 * `boundsSec`, length = +Inf): each observed at their mean, kept inside the bucket, so bucket counts and the sum are
 * exact (prom-client has no bulk observe).
 */
export function observeMany(child: { observe(v: number): void }, count: number, sumNs: number, boundsSec: readonly number[], bucket: number): void {
  let v = sumNs / count / 1e9;
  if (bucket < boundsSec.length) v = Math.min(v, boundsSec[bucket]);
  if (bucket > 0 && v <= boundsSec[bucket - 1]) v = boundsSec[bucket - 1] * (1 + 1e-12);
  for (let i = 0; i < count; i++) child.observe(v);
}
