/** The simulated chain's hops, their replicas and the stable pod/node names each replica carries. */
import { createHash } from 'node:crypto';
import { HOPS, type HopName } from '../../../contract/chain';

// The hop list is defined once, in the contract; the chain's modules read it from here.
export { HOPS, type HopName };

export interface Replica {
  hop: HopName;
  index: number;
  /** Stable per replica, Kubernetes-like: `<hop>-<5 hex of the hop name>-<index>`, e.g. `rag-7c9f8-0`. */
  pod: string;
  node: string;
  namespace: string;
}

export const DEFAULT_REPLICAS: Record<HopName, number> = {
  gateway: 1,
  embedding: 1,
  'vector-cache': 1,
  rag: 2,
  'llm-vllm': 2,
  'llm-tgi': 2,
  'llm-sglang': 1,
  agent: 1,
  tool: 1,
};

export const GPU_NODES = ['gpu-node-0', 'gpu-node-1'];
export const CPU_NODE = 'cpu-node-0';

export function podName(hop: string, index: number): string {
  const h = createHash('sha1').update(hop).digest('hex').slice(0, 5);
  return `${hop}-${h}-${index}`;
}

/** LLM replicas are spread over the GPU nodes (replica i on node i mod nodes); the rest share one CPU node. */
export function replicasOf(hop: HopName, count: number, namespace: string, gpuNodes = GPU_NODES): Replica[] {
  return Array.from({ length: count }, (_, index) => ({
    hop,
    index,
    pod: podName(hop, index),
    node: hop.startsWith('llm-') ? gpuNodes[index % gpuNodes.length] : CPU_NODE,
    namespace,
  }));
}
