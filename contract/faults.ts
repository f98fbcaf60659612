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
  'nccl_timeout',
  'gpu_memory_leak',
]);
export type FaultKind = z.infer<typeof FaultKind>;

/** Kinds only a cluster can do (Chaos Mesh PodChaos): the simulated chain has no pods to kill. */
export const ClusterFaultKind = z.enum(['pod_kill', 'pod_failure', 'container_kill']);
export type ClusterFaultKind = z.infer<typeof ClusterFaultKind>;

/** What a scenario's fault schedule can ask for: the chain's kinds and the cluster-only ones. */
export const ScenarioFaultKind = z.enum([...FaultKind.options, ...ClusterFaultKind.options]);
export type ScenarioFaultKind = z.infer<typeof ScenarioFaultKind>;

/** Where a scheduled fault is applied: the simulated chain's fault API, or Chaos Mesh on a real cluster. */
export const FaultVia = z.enum(['chain', 'chaos-mesh']);
export type FaultVia = z.infer<typeof FaultVia>;

const LABEL_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** How Chaos Mesh finds a hop's pods: a label selector (and optionally its own namespace, container and HTTP port). */
export const ChaosMeshHop = z.strictObject({
  labels: z
    .record(z.string().min(1).max(253), z.string().regex(LABEL_RE, 'a label value is ≤ 63 letters, digits, - _ .'))
    .refine((l) => Object.keys(l).length > 0, 'at least one label'),
  namespace: z.string().regex(DNS_LABEL_RE, 'a namespace is a DNS label').optional(),
  /** For container_kill (PodChaos containerNames) and StressChaos containerNames. */
  container: z.string().min(1).optional(),
  /** The port the hop's HTTP server listens on in the pod (HTTPChaos `port`): needed by error and timeout. */
  port: z.number().int().min(1).max(65535).optional(),
});
export type ChaosMeshHop = z.infer<typeof ChaosMeshHop>;

/** A scenario's cluster: the namespace the chain runs in and a selector per hop that faults may target. */
export const ChaosMeshTarget = z.strictObject({
  namespace: z.string().regex(DNS_LABEL_RE, 'a namespace is a DNS label (lower-case letters, digits, -)'),
  hops: z.partialRecord(FaultTarget, ChaosMeshHop),
});
export type ChaosMeshTarget = z.infer<typeof ChaosMeshTarget>;

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
