/**
 * Which kernel events are worth keeping in the database: the ones root cause cites as evidence. The thresholds are
 * the root-cause engine's (slowConnectMs, slowTlsMs: backend-proxy/src/rca/config.ts), matching what the exporter
 * itself records as notable (bpf-exporter/src/probes: SLOW_CONNECT_NS, SLOW_TLS_NS).
 */
import type { KernelEvent } from '../../../contract';
import { resolveConfig } from '../rca/config';

export interface NotableThresholds {
  slowConnectMs: number;
  slowTlsMs: number;
}

const rca = resolveConfig();
export const DEFAULT_NOTABLE: NotableThresholds = { slowConnectMs: rca.slowConnectMs, slowTlsMs: rca.slowTlsMs };

export function isNotableKernelEvent(e: KernelEvent, t: NotableThresholds = DEFAULT_NOTABLE): boolean {
  switch (e.type) {
    case 'tcp_connect_fail':
    case 'tcp_retransmit':
    case 'gpu_alloc_fail':
    case 'nccl_slow_collective':
    case 'gpu_memory_held': // a record per step GPU memory moved: sparse, and what the leak pass reads
      return true;
    case 'tcp_connect':
      return (e.durationMs ?? 0) >= t.slowConnectMs || Number(e.detail.synRetransmits ?? 0) > 0;
    case 'tls_handshake':
      return (e.durationMs ?? 0) >= t.slowTlsMs || (e.detail.result !== undefined && e.detail.result !== 'ok');
    default:
      return false; // http_traceparent: joins traces, is not evidence by itself
  }
}
