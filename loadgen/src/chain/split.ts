/**
 * Split mode: one OS process per hop replica, so each pod has its own pid (what a kernel probe sees and what the
 * bpf-exporter attributes by). This process keeps the control API, the fault registry and the dcgm-exporters; it
 * assigns every replica its ports up front, forks the replicas (loadgen/src/chain/replica-main.ts), mirrors faults and
 * settings to them over IPC, and receives the LLM replicas' engine figures for the simulated GPUs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { controlBindProblem, type ChainConfig } from '../config';
import type { Fault } from './faults/registry';
import type { EngineStats } from './gpu/dcgm';
import type { RunningChain } from './running';
import { ensureCudaStandIn } from './gpu/cuda-stand-in';
import { ensureNcclStandIn } from './gpu/nccl-stand-in';
import { startChain } from './start';
import { chainCert } from './tls';
import { HOPS, replicasOf } from './topology';

export type ToReplica =
  | { type: 'fault-start'; fault: Fault }
  | { type: 'fault-end'; id: string }
  | { type: 'settings'; vectorCacheHitRate: number }
  | { type: 'flush'; id: number };
export type FromReplica =
  | { type: 'ready'; pod: string; gpuDriverPid?: number }
  | { type: 'engine'; pod: string; stats: EngineStats }
  | { type: 'flushed'; id: number };

/** How long `forceFlush` waits for a replica's span export to be acknowledged. */
const FLUSH_TIMEOUT_MS = 10_000;

/** The kernel's ephemeral range: outgoing connections take source ports from it. */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const listenable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });

const taken = new Set<number>();
/**
 * A port a replica can listen on a moment later. Picked below the ephemeral range: a port from `listen(0)` is
 * ephemeral, so any outgoing connection (a replica's own calls) may take it as its source port before the replica
 * binds it (EADDRINUSE seen here). Falls back to `listen(0)` if nothing below the range is free.
 */
async function freePort(host: string): Promise<number> {
  const low = ephemeralLow();
  const floor = Math.min(20000, Math.max(1024, low - 8000));
  for (let tries = 0; tries < 200 && low - floor > 100; tries++) {
    const p = floor + Math.floor(Math.random() * (low - floor));
    if (!taken.has(p) && (await listenable(host, p))) {
      taken.add(p);
      return p;
    }
  }
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export async function startSplitChain(
  cfg: ChainConfig,
  log: Logger,
  /** How long the replica processes may take to be ready (a busy machine compiles each one slowly). */
  opts: { readyTimeoutMs?: number } = {}
): Promise<RunningChain & { children: ChildProcess[] }> {
  const bindProblem = controlBindProblem(cfg);
  if (bindProblem) throw new Error(`invalid chain configuration:\n  host: ${bindProblem}`);
  const gpuNodeNames = Array.from({ length: cfg.gpuNodes }, (_, i) => `gpu-node-${i}`);
  const replicas = HOPS.flatMap((h) => replicasOf(h, cfg.replicas[h], cfg.namespace, gpuNodeNames));
  const endpoints: Record<string, { url: string; tlsUrl?: string }> = {};
  for (const r of replicas) {
    const port = r.hop === 'gateway' && r.index === 0 && cfg.gatewayPort ? cfg.gatewayPort : await freePort(cfg.host);
    endpoints[r.pod] = {
      url: `http://${cfg.host}:${port}`,
      ...(cfg.tlsHops.includes(r.hop) ? { tlsUrl: `https://${cfg.host}:${await freePort(cfg.host)}` } : {}),
    };
  }
  const children: ChildProcess[] = [];
  const chainRef: { chain?: RunningChain } = {};
  const flushes = new Map<number, (child: ChildProcess) => void>();
  let nextFlush = 0;
  const readyPods = new Set<string>();
  const gpuDriverPids: Record<string, number> = {};
  // Built once here, before the LLM replica processes start and would race to build it.
  if (cfg.cudaStandIn) ensureCudaStandIn();
  if (cfg.cudaStandIn && cfg.tensorParallel > 1) ensureNcclStandIn();
  const entry = join(import.meta.dirname, 'replica-main.ts');
  const tlsEnv = cfg.tlsHops.length
    ? { HOPSCOPE_CHAIN_TLS_KEY: chainCert().key.toString(), HOPSCOPE_CHAIN_TLS_CERT: chainCert().cert.toString() }
    : {};
  const stopChildren = async (): Promise<void> => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null
          ? undefined
          : new Promise((r) => {
              c.once('exit', r);
              setTimeout(() => {
                c.kill('SIGKILL');
                r(undefined);
              }, 4000).unref();
            })
      )
    );
  };
  try {
    for (const r of replicas) {
      const child = fork(entry, [], {
        execArgv: ['--import', 'tsx'],
        // The control API's token stays here: replicas serve no control API.
        env: {
          ...process.env,
          ...tlsEnv,
          HOPSCOPE_CHAIN_TOKEN: '',
          HOPSCOPE_SPLIT_POD: r.pod,
          HOPSCOPE_SPLIT_ENDPOINTS: JSON.stringify(endpoints),
          HOPSCOPE_SPLIT_CONFIG: JSON.stringify({ ...cfg, controlToken: undefined }),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.on('message', (m: FromReplica) => {
        if (m.type === 'ready') {
          readyPods.add(m.pod);
          if (m.gpuDriverPid) gpuDriverPids[m.pod] = m.gpuDriverPid;
        }
        if (m.type === 'engine') chainRef.chain?.remoteEngines.set(m.pod, m.stats);
        if (m.type === 'flushed') flushes.get(m.id)?.(child);
      });
      child.on('exit', (code, sig) => {
        if (!stopping) log.error({ pod: r.pod, code, sig }, 'replica process exited');
      });
      children.push(child);
    }
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
    while (readyPods.size < replicas.length) {
      if (Date.now() > deadline)
        throw new Error(
          `replicas not ready: ${replicas
            .filter((r) => !readyPods.has(r.pod))
            .map((r) => r.pod)
            .join(', ')}`
        );
      if (children.some((c) => c.exitCode !== null)) throw new Error('a replica process exited during start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const chain = await startChain({ ...cfg, logger: log, only: [], endpoints, control: true });
    chainRef.chain = chain;
    replicas.forEach((r, i) => {
      chain.pids[r.pod] = children[i].pid!;
    });
    Object.assign(chain.gpuDriverPids, gpuDriverPids);
    const broadcast = (m: ToReplica) => {
      for (const c of children) if (c.connected) c.send(m);
    };
    chain.faults.on('start', (f: Fault) => broadcast({ type: 'fault-start', fault: f }));
    chain.faults.on('end', (f: Fault) => broadcast({ type: 'fault-end', id: f.id }));
    chain.onSettings = () => broadcast({ type: 'settings', vectorCacheHitRate: chain.settings.vectorCacheHitRate });
    // The replicas export their own spans: a flush of the chain is each replica's flush, acknowledged.
    const flushParent = chain.forceFlush;
    chain.forceFlush = async () => {
      const id = nextFlush++;
      const live = children.filter((c) => c.connected);
      const pending = new Set(live);
      const acked = new Promise<void>((resolve) => {
        if (!pending.size) return resolve();
        const done = setTimeout(resolve, FLUSH_TIMEOUT_MS);
        flushes.set(id, (c) => {
          pending.delete(c);
          if (!pending.size) {
            clearTimeout(done);
            resolve();
          }
        });
      });
      for (const c of live) c.send({ type: 'flush', id } satisfies ToReplica);
      await Promise.all([flushParent(), acked]);
      flushes.delete(id);
      if (pending.size) log.warn({ replicas: pending.size }, 'span flush not acknowledged by every replica');
    };
    const stopParent = chain.stop;
    chain.stop = async () => {
      stopping = true;
      await stopParent();
      await stopChildren();
    };
    log.info({ processes: children.length, pids: children.map((c) => c.pid) }, 'split mode: one process per pod');
    return Object.assign(chain, { children });
  } catch (err) {
    stopping = true;
    await stopChildren();
    throw err;
  }
}

let stopping = false;
