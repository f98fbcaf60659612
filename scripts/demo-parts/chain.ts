/**
 * The simulated AI chain (gateway on 127.0.0.1:3310, control API on 3319), exporting traces to the proxy's OTLP
 * endpoint; one process per pod (split mode), each declaring its pid → pod to the bpf-exporter. Its steady load comes
 * from the loadgen part (hopscope-load --scenario demo-steady), recorded as a run.
 */
import { join } from 'node:path';
import type { DemoContext, DemoPart } from './types';

export function part(ctx: DemoContext): DemoPart {
  const control = process.env.HOPSCOPE_CONTROL_PORT ?? '3319';
  return {
    name: 'chain',
    order: 30,
    command: process.execPath,
    // --split: one process per pod, so the bpf-exporter attributes kernel events (TLS handshakes, retransmits) to the right pod.
    args: ['--import', 'tsx', join(ctx.root, 'loadgen/src/chain/main.ts'), '--split'],
    env: {
      HOPSCOPE_GATEWAY_PORT: process.env.HOPSCOPE_GATEWAY_PORT ?? '3310',
      HOPSCOPE_CONTROL_PORT: control,
      HOPSCOPE_OTLP_ENDPOINT:
        process.env.HOPSCOPE_OTLP_ENDPOINT ?? `http://127.0.0.1:${process.env.HOPSCOPE_PROXY_PORT ?? '3301'}/v1/traces`,
      HOPSCOPE_EXPORTER_URL:
        process.env.HOPSCOPE_EXPORTER_URL ?? `http://127.0.0.1:${process.env.HOPSCOPE_BPF_PORT ?? '3302'}`,
    },
    readyUrl: `http://127.0.0.1:${control}/healthz`,
    ports: [
      { port: Number(process.env.HOPSCOPE_GATEWAY_PORT ?? '3310'), env: 'HOPSCOPE_GATEWAY_PORT' },
      { port: Number(control), env: 'HOPSCOPE_CONTROL_PORT' },
    ],
  };
}
