/** What a started chain is: its URLs, pods, processes and controls (shared by start.ts, split.ts and the control API). */
import type { ChainConfig } from '../config';
import type { FaultRegistry } from './faults/registry';
import type { DcgmOptions, EngineStats } from './gpu/dcgm';
import type { LlmHop } from './hops/llm';
import type { HopName } from './topology';

export interface HopInfo {
  hop: HopName;
  pod: string;
  node: string;
  namespace: string;
  url: string;
  tlsUrl?: string;
  metricsUrl: string;
}

export interface RunningChain {
  config: ChainConfig;
  gatewayUrl: string;
  controlUrl: string;
  hops: HopInfo[];
  dcgm: Array<{ node: string; url: string; metricsUrl: string }>;
  faults: FaultRegistry;
  llm: Map<string, LlmHop>;
  /** Mutable settings the control API can change at run time. */
  settings: { vectorCacheHitRate: number; dcgm: DcgmOptions };
  /** Engine figures of LLM pods run in other processes (split mode), fed by their reports. */
  remoteEngines: Map<string, EngineStats>;
  /** pid of the process serving each pod (all this process's pid unless split). */
  pids: Record<string, number>;
  /** pid of each LLM pod's CUDA driver process (registered with the bpf-exporter as that pod too). */
  gpuDriverPids: Record<string, number>;
  /** Called when the control API changes settings (split mode forwards them to the replica processes). */
  onSettings?: () => void;
  /** Prometheus http_sd targets for every hop and dcgm-exporter. */
  targets(): Array<{ targets: string[]; labels: Record<string, string> }>;
  forceFlush(): Promise<void>;
  stop(): Promise<void>;
}
