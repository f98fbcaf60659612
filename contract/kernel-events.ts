import { z } from 'zod';

/** Kernel signal kinds the bpf-exporter emits (one per probe family). */
export const KernelEventType = z.enum([
  'tcp_retransmit',
  'tcp_connect',
  'tcp_connect_fail',
  'tls_handshake',
  'gpu_alloc_fail',
  'http_traceparent',
]);
export type KernelEventType = z.infer<typeof KernelEventType>;

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
  traceId: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  detail: z.record(z.string(), z.unknown()),
  mode: z.enum(['live', 'replay']),
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
