/**
 * Shared by the full-stack kernel test and `bench/rca-chain.bench.ts`: a live bpf-exporter running real bpftrace probes
 * and the simulated chain in split mode (one process per pod, each pid registered with that exporter).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { loadConfig } from '../../../bpf-exporter/src/config';
import { startExporter, type Exporter } from '../../../bpf-exporter/src/server';
import { KernelEventList, type KernelEvent } from '../../../contract';
import { loadChainConfig, type ChainConfig } from '../../../loadgen/src/config';
import { makeLogger } from '../../../loadgen/src/log';
import { startSplitChain } from '../../../loadgen/src/chain/split';
import type { RunningChain } from '../../../loadgen/src/chain/start';
import { has, probeSkipReason } from '../bpf-exporter/helpers';

export type SplitChain = RunningChain & { children: ChildProcess[] };

/** Mounts tracefs when missing (no systemd mounts it on these machines; the probes need it), then says why real probes cannot run here, or undefined. */
export function kernelSkipReason(): string | undefined {
  if (process.platform === 'linux' && process.getuid?.() === 0 && !existsSync('/sys/kernel/tracing/available_events')) {
    spawnSync('mount', ['-t', 'tracefs', 'nodev', '/sys/kernel/tracing']);
  }
  return probeSkipReason();
}

/**
 * Starts the exporter (tcp_connect, tcp_retransmit, tls_handshake probes, unless `exporterEnv` says otherwise) and the
 * split chain registered with it; the chain's other settings come from `chain` (its OTLP endpoint, time scale…).
 * Resolves once the probes have settled.
 */
export async function startKernelChain(
  chain: Partial<ChainConfig>,
  exporterEnv: Record<string, string> = {}
): Promise<{ exp: Exporter; chain: SplitChain }> {
  const exp = await startExporter(
    loadConfig({
      HOPSCOPE_BPF_PORT: '0',
      HOPSCOPE_BPF_NODE: 'fs-node',
      HOPSCOPE_BPF_PROBES: 'tcp_connect,tcp_retransmit,tls_handshake',
      HOPSCOPE_BPF_NODE_BINARY: process.execPath,
      ...exporterEnv,
    }),
    pino({ level: 'warn' })
  );
  const cfg = loadChainConfig({ gatewayPort: 0, controlPort: 0, logLevel: 'silent', ...chain, exporterUrl: exp.url });
  // Split mode picks its ports before forking the replicas: on this shared machine one may be taken meanwhile.
  const startSplit = async (): Promise<SplitChain> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startSplitChain(cfg, makeLogger('silent'));
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  };
  try {
    const [c] = await Promise.all([startSplit(), exp.pipeline.settled(60_000)]);
    return { exp, chain: c };
  } catch (err) {
    await exp.stop().catch(() => {});
    throw err;
  }
}

/** The probes that did not attach, with the exporter's reason (empty: all attached). */
export async function unattachedProbes(exp: Exporter): Promise<string[]> {
  const health = (await (await fetch(`${exp.url}/health`)).json()) as {
    probes: Array<{ name: string; attached: boolean; reason?: string }>;
  };
  return health.probes.filter((p) => !p.attached).map((p) => `${p.name}: ${p.reason}`);
}

/** The exporter's events for a query string (`from=…&to=…&type=…`). */
export async function exporterEvents(exp: Exporter, query: string): Promise<KernelEvent[]> {
  const res = await fetch(`${exp.url}/events?${query}`);
  const body = (await res.json()) as { error?: { message: string } };
  if (!res.ok) throw new Error(`exporter /events?${query}: ${res.status} ${body.error?.message ?? ''}`);
  return KernelEventList.parse(body).events;
}

/** The chain removes its nft tables when a fault ends or it stops; make sure (the names carry this process' pid). */
export function removeChainNftTables(): void {
  if (!has('nft')) return;
  const tables = spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout ?? '';
  for (const m of tables.matchAll(new RegExp(`table inet (lg-hopscope-${process.pid}-\\d+)`, 'g')))
    spawnSync('nft', ['delete', 'table', 'inet', m[1]]);
}
