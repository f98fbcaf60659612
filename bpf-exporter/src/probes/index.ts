/** Every probe this exporter knows. Adding a probe is adding one module here. */
import type { ProbeModule } from '../core/probe';
import { gpuAllocFailProbe } from './gpu-alloc-fail';
import { gpuMemoryHeldProbe } from './gpu-memory-held';
import { httpTraceparentProbe } from './http-traceparent';
import { ncclCollectiveProbe } from './nccl-collective';
import { tcpConnectProbe } from './tcp-connect';
import { tcpRetransmitProbe } from './tcp-retransmit';
import { tlsHandshakeProbe } from './tls-handshake';

export const ALL_PROBES: ProbeModule[] = [
  tcpConnectProbe,
  tcpRetransmitProbe,
  tlsHandshakeProbe,
  gpuAllocFailProbe,
  gpuMemoryHeldProbe,
  httpTraceparentProbe,
  ncclCollectiveProbe,
];

/** Started unless HOPSCOPE_BPF_PROBES says otherwise; opt-in probes are named explicitly. */
export const DEFAULT_PROBES = ALL_PROBES.filter((p) => !p.optIn).map((p) => p.name);
