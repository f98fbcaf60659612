import { z } from 'zod';
import { HOPS } from './chain';

/** Hops of the simulated chain that faults can target: every hop. */
export const FaultTarget = z.enum(HOPS);
export type FaultTarget = z.infer<typeof FaultTarget>;

export const FaultKind = z.enum([
  'latency',
  'error',
  'timeout',
  'cpu_hog',
  'tls_slow_handshake',
  'gpu_oom',
  'kv_cache_thrash',
  'tcp_retransmit',
]);
export type FaultKind = z.infer<typeof FaultKind>;

export const FaultRequest = z.object({
  target: FaultTarget,
  kind: FaultKind,
  magnitude: z.number().optional(),
  durationS: z.number().positive().max(3600).optional(),
  /** Only this replica of the target (a pod name from the chain's topology); all replicas when absent. */
  pod: z.string().optional(),
});
export type FaultRequest = z.infer<typeof FaultRequest>;

/** A fault as an annotation (what the proxy reads and the app marks on time series). */
export const FaultAnnotation = z.object({
  id: z.string(),
  target: FaultTarget,
  kind: FaultKind,
  magnitude: z.number().optional(),
  startMs: z.number(),
  endMs: z.number().optional(),
  active: z.boolean(),
  /** The replica hit, when the fault targeted one pod. */
  pod: z.string().optional(),
  /** Why a fault ended early or what it did (e.g. "nft table lg-… removed"). */
  note: z.string().optional(),
});
export type FaultAnnotation = z.infer<typeof FaultAnnotation>;
