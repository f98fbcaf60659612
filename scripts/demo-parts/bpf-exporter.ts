/** The per-node eBPF exporter on 127.0.0.1:3302. Without root or bpftrace it still starts, serves /health (saying
 *  why each probe is not attached) and an empty /events: it never fakes live data. */
import { machinePreflight } from '../../bpf-exporter/src/core/preflight';
import type { DemoContext, DemoPart } from './types';

export function part(ctx: DemoContext): DemoPart {
  const port = process.env.HOPSCOPE_BPF_PORT ?? '3302';
  return {
    name: 'bpf-exporter',
    order: 20,
    command: process.execPath,
    args: ['--import', 'tsx', 'bpf-exporter/src/main.ts'],
    env: {
      HOPSCOPE_BPF_PORT: port,
      HOPSCOPE_BPF_HOST: '127.0.0.1',
      HOPSCOPE_BPF_NODE: process.env.HOPSCOPE_BPF_NODE ?? 'demo-node',
    },
    readyUrl: `http://127.0.0.1:${port}/health`,
    ports: [{ port: Number(port), env: 'HOPSCOPE_BPF_PORT' }],
    async available() {
      const m = machinePreflight(process.env.HOPSCOPE_BPFTRACE || 'bpftrace');
      if (!m.ok)
        console.log(
          `[bpf-exporter] probes will not attach: ${m.reason} (serving /health and empty /events; set HOPSCOPE_BPF_REPLAY=<file.jsonl> to replay a recording, marked mode "replay")`
        );
      void ctx;
      return true;
    },
  };
}
