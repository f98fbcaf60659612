/**
 * Every kind of evidence the root-cause engine gives, once: the engine's wording and the app's labels both read this
 * catalogue, so a new signal is one entry here and one pass in the engine.
 */
import { z } from 'zod';
import { KERNEL_EVENT_TYPES, type KernelEventType } from './kernel-events';

export const EvidenceKind = z.enum([
  'self_time',
  'client_server_gap',
  'unanswered_call',
  'client_side_delay',
  'kv_cache_drop',
  'error',
  'timeout',
  'model_fallback',
  'gpu_oom',
  'broken_propagation',
  'chronic',
  'critical_path_share',
  'inferred_call',
  'llm_queue',
  'llm_prefill',
  'llm_decode',
  'llm_preemption',
  'kernel:tcp_retransmit',
  'kernel:tcp_connect',
  'kernel:tcp_connect_fail',
  'kernel:tls_handshake',
  'kernel:gpu_alloc_fail',
  'kernel:http_traceparent',
  'kernel:nccl_slow_collective',
  'nccl_timeout',
  'kernel:gpu_memory_held',
  'gpu_memory_leak',
]);
export type EvidenceKind = z.infer<typeof EvidenceKind>;

/** The evidence kind of a kernel event type (fails to compile if a type has no `kernel:` kind above). */
export const kernelEvidenceKind = (type: KernelEventType): EvidenceKind => `kernel:${type}`;

export interface EvidenceKindInfo {
  /** A short title (a badge, a legend). */
  label: string;
  /** What it means, as a noun phrase that reads after "… in 3 of 40 traces" too. */
  description: string;
}

const kernelKind = (type: KernelEventType): EvidenceKindInfo => ({
  label: KERNEL_EVENT_TYPES[type].label,
  description: `${KERNEL_EVENT_TYPES[type].noun.many} seen by eBPF on the hop's pod or link while its spans ran`,
});

export const EVIDENCE_KINDS: Record<EvidenceKind, EvidenceKindInfo> = {
  self_time: { label: 'Own time', description: 'own (exclusive) time above its baseline' },
  client_server_gap: {
    label: 'Client→server gap',
    description: 'client→server gap above its baseline (network, TLS, queueing)',
  },
  unanswered_call: { label: 'Unanswered call', description: 'calls into it with no server span, slower than baseline' },
  client_side_delay: {
    label: 'Client-side delay',
    description: 'its calls to several services all slow to leave it (CPU, client pool, egress)',
  },
  kv_cache_drop: { label: 'KV-cache drop', description: 'KV-cache hit rate collapsed against its baseline' },
  error: { label: 'Error origin', description: 'the first failing span' },
  timeout: { label: 'Timeout', description: 'calls into it timed out' },
  model_fallback: {
    label: 'Model fallback',
    description: 'requests answered by a fallback model instead of the one asked for',
  },
  gpu_oom: { label: 'GPU out of memory', description: 'the span reports a GPU out-of-memory' },
  broken_propagation: { label: 'Broken propagation', description: 'broken context propagation' },
  chronic: { label: 'Chronic', description: 'excess that healthy traffic already shows here (discounted)' },
  critical_path_share: { label: 'On the critical path', description: 'time on the critical path, within its baseline' },
  inferred_call: {
    label: 'Inferred call',
    description:
      'calls into it inferred from the trace tree, the spans saying no kind (a child on another service or pod is the server side)',
  },
  llm_queue: {
    label: 'Engine queue',
    description: "time waiting in the inference engine's queue above its baseline (engine saturated)",
  },
  llm_prefill: { label: 'Prefill', description: 'prompt processing (prefill) above its baseline' },
  llm_decode: { label: 'Decode', description: 'token generation (decode) above its baseline' },
  llm_preemption: {
    label: 'Preemption',
    description: 'requests preempted by the engine (KV cache full) and recomputed',
  },
  'kernel:tcp_retransmit': kernelKind('tcp_retransmit'),
  'kernel:tcp_connect': kernelKind('tcp_connect'),
  'kernel:tcp_connect_fail': kernelKind('tcp_connect_fail'),
  'kernel:tls_handshake': kernelKind('tls_handshake'),
  'kernel:gpu_alloc_fail': kernelKind('gpu_alloc_fail'),
  'kernel:http_traceparent': kernelKind('http_traceparent'),
  'kernel:nccl_slow_collective': kernelKind('nccl_slow_collective'),
  nccl_timeout: {
    label: 'NCCL timeout',
    description:
      "a tensor-parallel group's collective that timed out (the NCCL watchdog) on a stalled rank, failing every request on the group",
  },
  'kernel:gpu_memory_held': kernelKind('gpu_memory_held'),
  gpu_memory_leak: {
    label: 'GPU memory leak',
    description: "GPU memory held by the pod's processes growing without being freed (eBPF on the CUDA driver)",
  },
};
