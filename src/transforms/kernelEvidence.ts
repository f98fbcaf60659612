/**
 * Kernel events of a pod (from the proxy, which reads the bpf-exporters) arranged for the evidence view: one timeline
 * lane per signal, the TLS handshake latency distribution, and counts that say what happened in a sentence.
 */
import { KERNEL_EVENT_TYPES, type KernelEvent, type KernelEventType } from '../../contract';
import { quantile } from './histogram';

/** The signals shown as lanes, in the order an SRE reads them (network first, then the GPU); labels from the catalogue. */
const LANE_TYPES: KernelEventType[] = ['tcp_retransmit', 'tcp_connect', 'tcp_connect_fail', 'tls_handshake', 'gpu_alloc_fail'];
const KERNEL_LANES = LANE_TYPES.map((type) => ({ type, label: KERNEL_EVENT_TYPES[type].label }));

export interface KernelLane {
  type: KernelEventType;
  label: string;
  events: KernelEvent[];
}

export function kernelLanes(events: KernelEvent[]): KernelLane[] {
  const byType = new Map<KernelEventType, KernelEvent[]>();
  for (const e of events) {
    const list = byType.get(e.type) ?? [];
    list.push(e);
    byType.set(e.type, list);
  }
  return KERNEL_LANES.map(({ type, label }) => ({
    type,
    label,
    events: (byType.get(type) ?? []).sort((a, b) => a.ts - b.ts),
  }));
}

export interface KernelSummary {
  counts: Partial<Record<KernelEventType, number>>;
  tlsP50Ms?: number;
  tlsP99Ms?: number;
  connectP99Ms?: number;
  replay: boolean;
  /** Events that carry a trace id (the probe saw the traceparent): these link to traces. */
  withTrace: number;
}

export function summarizeKernelEvents(events: KernelEvent[]): KernelSummary {
  const counts: Partial<Record<KernelEventType, number>> = {};
  const tls: number[] = [];
  const connect: number[] = [];
  let withTrace = 0;
  let replay = false;
  for (const e of events) {
    counts[e.type] = (counts[e.type] ?? 0) + 1;
    if (e.type === 'tls_handshake' && e.durationMs !== undefined) {
      tls.push(e.durationMs);
    }
    if (e.type === 'tcp_connect' && e.durationMs !== undefined) {
      connect.push(e.durationMs);
    }
    if (e.traceId) {
      withTrace++;
    }
    if (e.mode === 'replay') {
      replay = true;
    }
  }
  return {
    counts,
    tlsP50Ms: quantile(tls, 0.5),
    tlsP99Ms: quantile(tls, 0.99),
    connectP99Ms: quantile(connect, 0.99),
    replay,
    withTrace,
  };
}

/** Events overlapping [fromMs, toMs] (e.g. a span's window, for the trace view); `ts` is when an event started. */
export function eventsInWindow(events: KernelEvent[], fromMs: number, toMs: number): KernelEvent[] {
  return events.filter((e) => e.ts <= toMs && e.ts + (e.durationMs ?? 0) >= fromMs);
}

/** A one-line description of an event's detail for tables (`dst=10.0.0.7:443 retrans=3`). */
export function describeDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}
