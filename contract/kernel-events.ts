import { z } from 'zod';

/** Kernel signal kinds the bpf-exporter emits (one per probe family). */
export const KernelEventType = z.enum([
  'tcp_retransmit',
  'tcp_connect',
  'tcp_connect_fail',
  'tls_handshake',
  'gpu_alloc_fail',
  'http_traceparent',
  'nccl_slow_collective',
  'gpu_memory_held',
]);
export type KernelEventType = z.infer<typeof KernelEventType>;

export interface KernelEventTypeInfo {
  /** A lane or legend title, e.g. "TCP retransmits". */
  label: string;
  /** A table cell's word, e.g. "retrans". */
  short: string;
  /** Counted in a sentence: one, many (the engine's "2 slow TLS handshakes"). */
  noun: { one: string; many: string };
  /** What `durationMs` measures ('ms'), or 'count' when an event has no duration. */
  unit: 'ms' | 'count';
  /** Which events the exporter records as notable (their own budget): every one, only slow or failed ones, or none. */
  notable: 'always' | 'slow' | 'never';
  description: string;
}

/** One catalogue of kernel event types: the app's lanes and cells, the engine's wording. */
export const KERNEL_EVENT_TYPES: Record<KernelEventType, KernelEventTypeInfo> = {
  tcp_retransmit: {
    label: 'TCP retransmits',
    short: 'retrans',
    noun: { one: 'TCP retransmit', many: 'TCP retransmits' },
    unit: 'count',
    notable: 'always',
    description: 'A TCP segment (SYN or data) sent again: loss or congestion on the link.',
  },
  tcp_connect: {
    label: 'TCP connect latency',
    short: 'connect',
    noun: { one: 'slow TCP connect', many: 'slow TCP connects' },
    unit: 'ms',
    notable: 'slow',
    description: 'An outgoing TCP connect and how long it took (notable when slow or its SYN was resent).',
  },
  tcp_connect_fail: {
    label: 'TCP connect failures',
    short: 'connect fail',
    noun: { one: 'failed TCP connect', many: 'failed TCP connects' },
    unit: 'count',
    notable: 'always',
    description: 'An outgoing TCP connect that failed (refused, reset or timed out).',
  },
  tls_handshake: {
    label: 'TLS handshakes',
    short: 'TLS',
    noun: { one: 'slow TLS handshake', many: 'slow TLS handshakes' },
    unit: 'ms',
    notable: 'slow',
    description: 'A TLS handshake and how long it took (notable when slow or failed).',
  },
  gpu_alloc_fail: {
    label: 'GPU allocation failures',
    short: 'GPU alloc fail',
    noun: { one: 'GPU memory allocation failure', many: 'GPU memory allocation failures' },
    unit: 'count',
    notable: 'always',
    description: 'A GPU memory allocation that failed (out of device memory).',
  },
  http_traceparent: {
    label: 'Traced HTTP requests',
    short: 'traced',
    noun: { one: 'traced HTTP request', many: 'traced HTTP requests' },
    unit: 'count',
    notable: 'never',
    description: 'An HTTP request whose traceparent header the probe read: joins kernel events to a trace.',
  },
  nccl_slow_collective: {
    label: 'Slow NCCL collectives',
    short: 'NCCL slow',
    noun: { one: 'slow NCCL collective', many: 'slow NCCL collectives' },
    unit: 'ms',
    notable: 'always',
    description:
      'An NCCL collective call (ncclAllReduce) that took longer than the threshold in a rank process: a stalled or slow rank of a tensor-parallel group.',
  },
  gpu_memory_held: {
    label: 'GPU memory held',
    short: 'GPU held',
    noun: { one: 'GPU memory step', many: 'GPU memory steps' },
    unit: 'count',
    notable: 'always',
    description:
      "A process's GPU memory held (CUDA allocations minus frees) moved by a step since its last record: with how much it grew since it last fell, over how long, and the allocations and frees meanwhile.",
  },
};

/** One kernel event, as served by the bpf-exporter's /events and joined by the proxy. `mode` is never omitted:
 *  replayed data must never pass for live data. */
export const KernelEvent = z.object({
  ts: z.number(), // epoch ms
  type: KernelEventType,
  pid: z.number().int().nonnegative(),
  comm: z.string(),
  pod: z.string().optional(),
  namespace: z.string().optional(),
  node: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  detail: z.record(z.string(), z.unknown()),
  mode: z.enum(['live', 'replay']),
  /** The exporter's sequence number of this event: increasing, never reused (across restarts too); `after=<seq>` and
   *  the SSE `id:` resume from it. */
  seq: z.number().int().nonnegative().optional(),
  /** Recorded as notable by the probe (failed, slow, every retransmit or GPU failure: see KERNEL_EVENT_TYPES). */
  notable: z.boolean().optional(),
  /** The pod's workload labels the exporter is configured to keep (e.g. `app.kubernetes.io/name`). */
  labels: z.record(z.string(), z.string()).optional(),
});
export type KernelEvent = z.infer<typeof KernelEvent>;

export const KernelEventList = z.object({
  events: z.array(KernelEvent),
  dropped: z.number().int().nonnegative().optional(),
  /** Events of the window over the exporter's per-event budget: counted in its metrics, absent from `events`. */
  suppressed: z.number().int().nonnegative().optional(),
  truncated: z.boolean().optional(),
});
export type KernelEventList = z.infer<typeof KernelEventList>;
