/**
 * What a probe module is: its bpftrace program, what it needs from the machine, a parser of its printf lines, and its
 * metrics. The core runs any probe through this interface and knows nothing probe-specific (ebpf_exporter's model).
 */
import type { Registry } from 'prom-client';
import type { KernelEvent, KernelEventType } from '../../../contract';
import type { Kit, TallyHit, TallySpec } from './kit';

export type { TallyHit, TallySpec } from './kit';

/** Options every probe may read; each probe takes what it needs. */
export interface ProbeOptions {
  /** 1 in N HTTP requests has its traceparent read (1 = every request). */
  traceparentSampleEvery: number;
  /** The exporter's own pid, excluded where a probe would otherwise see the exporter itself. */
  selfPid: number;
}

/** Something the probe needs before bpftrace is worth starting; checked up front so /health can say exactly why. */
export type Requirement =
  { kind: 'tracepoint'; category: string; name: string } | { kind: 'file'; path: string; what: string };

/**
 * A kind of file a probe puts uprobes on. The files are the ones the workloads run, found in their processes' maps
 * (core/uprobe-files.ts), plus any named explicitly (HOPSCOPE_BPF_LIBCUDA …); a file is attached when it exports the
 * symbols.
 */
export interface UprobeKind {
  /** The file kind (`node`, `libssl`, `libcuda`): the same name means the same matcher, across probes. */
  file: string;
  /** Whether a mapped file, by its base name, is one of these. */
  matches(baseName: string): boolean;
  /** Symbols the file must export; `anyOf`: at least one, and only those present are attached. */
  symbols: string[];
  anyOf?: boolean;
}

/** One file the program attaches to. */
export interface UprobeTarget {
  file: string;
  /** A path reaching the file from the exporter: its own, or /proc/<pid>/root/… for a container's file. */
  path: string;
  /** The kind's symbols this file exports. */
  symbols: string[];
}

/** A probe's parse result: the event without attribution (the core adds pod/namespace/node/traceId and `mode`). */
export interface RawEvent {
  type: KernelEventType;
  /** Monotonic kernel time (bpf `nsecs`) of the event; the core converts it to epoch ms. */
  nsecs?: bigint;
  pid: number;
  /** The process name, from the kit's record prefix (never from the probe's own text). */
  comm: string;
  /** cgroup v2 id the event belongs to (the socket's, for softirq-context TCP events). */
  cgroupId?: number;
  durationMs?: number;
  /** A W3C trace id seen by this event itself (http_traceparent). */
  traceId?: string;
  detail: Record<string, unknown>;
  /** Flush epoch the kernel counted this event in (printed by kit.event as "e"). */
  epoch?: number;
  /** Recorded in the notable class (the kit's prefix). */
  notable?: boolean;
  /** The tally this event was counted in, when the probe keeps one. */
  tally?: TallyHit;
}

/** What a probe's parser returns: everything but the process name, which the core takes from the record prefix. */
export type ParsedRecord = Omit<RawEvent, 'comm'>;

/** Label values a kernel count is attributed to: pod, namespace, node, then the configured workload labels. */
export type PodLabelValues = Record<string, string>;

/** The pod labels every probe metric starts with (core/pod-labels.ts). */
export interface PodLabelSet {
  names: readonly string[];
  ofEvent(e: KernelEvent): PodLabelValues;
}

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
  /** Files the probe puts uprobes on; `uprobesRequired`: without one the probe waits (it has nothing else to watch). */
  uprobes?: UprobeKind[];
  uprobesRequired?: boolean;
  /**
   * `targets`: the files to attach to, each with the symbols it really exports; `kit` emits the counting, per-event
   * budget and flush code every probe shares (core/kit.ts).
   */
  program(opts: ProbeOptions, targets: UprobeTarget[], kit: Kit): string;
  /** Extra environment for this probe's bpftrace (e.g. BPFTRACE_STRLEN). */
  env?: Record<string, string>;
  /** `line` is the probe's own text of one record (most probes print JSON); null when the line is not an event. */
  parse(line: string): ParsedRecord | null;
  metrics(registry: Registry, pod: PodLabelSet): ProbeMetrics;
}

/**
 * prom-client hashes the label object on every observation; at thousands of events/s that shows. This keeps one
 * child per label set (bounded: past `max` sets it falls back to the uncached call).
 */
export function labelCache<C>(
  metric: { labels(labels: Record<string, string>): C },
  max = 10_000
): (labels: Record<string, string>) => C {
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
  1: 'ESTABLISHED',
  2: 'SYN_SENT',
  3: 'SYN_RECV',
  4: 'FIN_WAIT1',
  5: 'FIN_WAIT2',
  6: 'TIME_WAIT',
  7: 'CLOSE',
  8: 'CLOSE_WAIT',
  9: 'LAST_ACK',
  10: 'LISTEN',
  11: 'CLOSING',
  12: 'NEW_SYN_RECV',
};

/**
 * Adds `count` observations totalling `sumNs` that the kernel put in histogram bucket `bucket` (index into
 * `boundsSec`, length = +Inf): each observed at their mean, kept inside the bucket, so bucket counts and the sum are
 * exact (prom-client has no bulk observe).
 */
export function observeMany(
  child: { observe(v: number): void },
  count: number,
  sumNs: number,
  boundsSec: readonly number[],
  bucket: number
): void {
  let v = sumNs / count / 1e9;
  if (bucket < boundsSec.length) v = Math.min(v, boundsSec[bucket]);
  if (bucket > 0 && v <= boundsSec[bucket - 1]) v = boundsSec[bucket - 1] * (1 + 1e-12);
  for (let i = 0; i < count; i++) child.observe(v);
}
