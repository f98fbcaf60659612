/**
 * A scenario fault → the Chaos Mesh resource that does it (pure). Where Chaos Mesh has an equivalent:
 *   latency         → NetworkChaos action delay (magnitude: added ms, as on the chain)
 *   tcp_retransmit  → NetworkChaos action loss (magnitude: percent of packets dropped, as on the chain)
 *   error           → HTTPChaos on the Response, replace code 500 (every matching request: magnitude must be 1)
 *   timeout         → HTTPChaos on the Request, delay past the scenario's request timeout (magnitude must be 1)
 *   cpu_hog         → StressChaos cpu stressor (magnitude: CPU workers at 100 % per pod, default 1)
 *   pod_kill        → PodChaos pod-kill (the controller restarts it; magnitude: pods, default 1)
 *   pod_failure     → PodChaos pod-failure (unavailable for `for`; magnitude: pods, default 1)
 *   container_kill  → PodChaos container-kill (the container restarts; needs the hop's `container`)
 * The others have no Chaos Mesh equivalent and are refused with the alternative named.
 */
import type { ChaosMeshHop, ChaosMeshTarget, ScenarioFaultKind } from '../../../contract/faults';
import type { ScenarioFault } from '../../../contract/scenario';
import { KIND_SPECS } from '../chain/faults/registry';
import {
  API_VERSION,
  EXPIRES_ANNOTATION,
  FAULT_ANNOTATION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OWNER_ANNOTATION,
  RUN_ID_ANNOTATION,
  RUN_ID_LABEL,
  resourceName,
  runIdLabel,
  type ChaosKind,
  type ChaosManifest,
} from './resources';

export interface ManifestContext {
  runId: string;
  chaosMesh: ChaosMeshTarget;
  /** `host/pid` of the driver that creates it (the next start's cleanup checks whether it still lives). */
  owner: string;
  /** When the resource is stale whatever its owner: the run's planned end plus a grace period. */
  expiresAt: Date;
  /** The scenario's per-request timeout (s): a `timeout` fault delays requests past it. */
  requestTimeoutS: number;
}

/** Why a kind cannot go through Chaos Mesh, and what to use instead. */
const REFUSED: Partial<Record<ScenarioFaultKind, string>> = {
  tls_slow_handshake:
    'Chaos Mesh has no TLS-handshake fault: use latency via chaos-mesh (a NetworkChaos delay slows every packet, the handshake included), or tls_slow_handshake via chain',
  gpu_oom:
    'Chaos Mesh has no GPU fault (it injects network, HTTP, stress, pod, I/O, time and kernel faults): run gpu_oom on the simulated chain (via: chain)',
  gpu_memory_leak:
    'Chaos Mesh has no GPU fault: run gpu_memory_leak on the simulated chain (via: chain), whose stand-in CUDA driver really leaks',
  kv_cache_thrash:
    'Chaos Mesh has no KV-cache or GPU fault: run kv_cache_thrash on the simulated chain (via: chain), or memory pressure with a StressChaos outside hopscope-load',
  nccl_timeout:
    "Chaos Mesh has no NCCL or GPU fault: run nccl_timeout on the simulated chain (via: chain, HOPSCOPE_TP=2), or a NetworkChaos partition between the ranks' pods outside hopscope-load",
};

/** Go duration for Chaos Mesh fields: whole seconds as `Ns`, else milliseconds. */
export function goDuration(s: number): string {
  return Number.isInteger(s) ? `${s}s` : `${Math.round(s * 1000)}ms`;
}

export class RefusedFault extends Error {}

function magnitudeIn(f: ScenarioFault, def: number, min: number, max: number, unit: string): number {
  const m = f.magnitude ?? def;
  if (!Number.isFinite(m) || m <= min || m > max)
    throw new RefusedFault(
      `magnitude for ${f.kind} via chaos-mesh is ${unit}: must be > ${min} and ≤ ${max} (got ${f.magnitude})`
    );
  return m;
}

function wholeRequests(f: ScenarioFault): void {
  if (f.magnitude !== undefined && f.magnitude !== 1)
    throw new RefusedFault(
      `${f.kind} via chaos-mesh hits every request to the selected pods (an HTTPChaos has no per-request probability): leave magnitude out or 1, or use via: chain for a probability (got ${f.magnitude})`
    );
}

function podCount(f: ScenarioFault): number {
  const m = f.magnitude ?? 1;
  if (!Number.isInteger(m) || m < 1 || m > 1000)
    throw new RefusedFault(`magnitude for ${f.kind} via chaos-mesh is a number of pods: an integer 1–1000 (got ${m})`);
  return m;
}

/** Chaos Mesh's PodSelectorSpec for the hop (or the one pod the fault names). */
function selector(hop: ChaosMeshHop, ns: string, pod: string | undefined): Record<string, unknown> {
  return pod ? { pods: { [ns]: [pod] } } : { namespaces: [ns], labelSelectors: { ...hop.labels } };
}

function specFor(
  f: ScenarioFault,
  hop: ChaosMeshHop,
  ns: string,
  ctx: ManifestContext
): [ChaosKind, Record<string, unknown>] {
  const refused = REFUSED[f.kind];
  if (refused) throw new RefusedFault(refused);
  const sel = selector(hop, ns, f.pod);
  const all = { mode: 'all', selector: sel };
  const duration = f.for !== undefined ? { duration: goDuration(f.for) } : {};
  const http = (): { port: number } => {
    if (hop.port === undefined)
      throw new RefusedFault(
        `${f.kind} via chaos-mesh is an HTTPChaos, which needs the port the hop's server listens on: set chaosMesh.hops.${f.target}.port`
      );
    return { port: hop.port };
  };
  switch (f.kind) {
    case 'latency': {
      const s = KIND_SPECS.latency;
      const ms = magnitudeIn(f, s.default, s.min, s.max, s.unit);
      return ['NetworkChaos', { action: 'delay', ...all, direction: 'to', delay: { latency: `${ms}ms` }, ...duration }];
    }
    case 'tcp_retransmit': {
      const s = KIND_SPECS.tcp_retransmit;
      const pct = magnitudeIn(f, s.default, s.min, 100, 'percent of packets to the hop dropped');
      return ['NetworkChaos', { action: 'loss', ...all, direction: 'to', loss: { loss: String(pct) }, ...duration }];
    }
    case 'error':
      wholeRequests(f);
      return ['HTTPChaos', { ...all, target: 'Response', ...http(), replace: { code: 500 }, ...duration }];
    case 'timeout':
      wholeRequests(f);
      return [
        'HTTPChaos',
        { ...all, target: 'Request', ...http(), delay: goDuration(Math.ceil(ctx.requestTimeoutS) + 5), ...duration },
      ];
    case 'cpu_hog': {
      const workers = magnitudeIn(f, 1, 0, 64, 'CPU workers at 100 % per pod (a StressChaos cpu stressor)');
      if (!Number.isInteger(workers))
        throw new RefusedFault(`magnitude for cpu_hog via chaos-mesh is a whole number of workers (got ${workers})`);
      return [
        'StressChaos',
        {
          ...all,
          ...(hop.container ? { containerNames: [hop.container] } : {}),
          stressors: { cpu: { workers, load: 100 } },
          ...duration,
        },
      ];
    }
    case 'pod_kill':
      return ['PodChaos', { action: 'pod-kill', ...counted(f, sel), gracePeriod: 0 }];
    case 'pod_failure':
      return ['PodChaos', { action: 'pod-failure', ...counted(f, sel), ...duration }];
    case 'container_kill':
      if (!hop.container)
        throw new RefusedFault(
          `container_kill needs the container to kill: set chaosMesh.hops.${f.target}.container (PodChaos containerNames)`
        );
      return ['PodChaos', { action: 'container-kill', ...counted(f, sel), containerNames: [hop.container] }];
    default:
      throw new RefusedFault(`${f.kind} has no Chaos Mesh equivalent: run it on the simulated chain (via: chain)`);
  }
}

/** One pod (mode one), or N (mode fixed, value "N"); a named pod is that pod. */
function counted(f: ScenarioFault, sel: Record<string, unknown>): Record<string, unknown> {
  if (f.pod) return { mode: 'all', selector: sel };
  const n = podCount(f);
  return n === 1 ? { mode: 'one', selector: sel } : { mode: 'fixed', value: String(n), selector: sel };
}

/** The manifest for the scenario's `index`-th fault; throws RefusedFault with the reason and the alternative. */
export function manifestFor(f: ScenarioFault, index: number, ctx: ManifestContext): ChaosManifest {
  const hop = ctx.chaosMesh.hops[f.target];
  if (!hop) throw new RefusedFault(`no chaosMesh.hops.${f.target}: give the label selector of its pods`);
  const ns = hop.namespace ?? ctx.chaosMesh.namespace;
  const [kind, spec] = specFor(f, hop, ns, ctx);
  const what = `${f.kind}${f.magnitude !== undefined ? ` ${f.magnitude}` : ''} on ${f.target}${f.pod ? ` (${f.pod})` : ''} at ${f.at} s${f.for !== undefined ? ` for ${f.for} s` : ''}`;
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: {
      name: resourceName(ctx.runId, index, f.kind),
      namespace: ns,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [RUN_ID_LABEL]: runIdLabel(ctx.runId) },
      annotations: {
        [RUN_ID_ANNOTATION]: ctx.runId,
        [OWNER_ANNOTATION]: ctx.owner,
        [EXPIRES_ANNOTATION]: ctx.expiresAt.toISOString(),
        [FAULT_ANNOTATION]: what,
      },
    },
    spec,
  };
}

/** Every chaos-mesh fault's manifest (index = its place in the whole schedule); the refusals, all of them, in one error. */
export function manifestsFor(
  faults: ScenarioFault[],
  ctx: Omit<ManifestContext, 'chaosMesh'> & { chaosMesh?: ChaosMeshTarget }
): Array<{ index: number; manifest: ChaosManifest }> {
  const out: Array<{ index: number; manifest: ChaosManifest }> = [];
  const refused: string[] = [];
  faults.forEach((f, index) => {
    if (f.via !== 'chaos-mesh') return;
    if (!ctx.chaosMesh) return void refused.push(`faults[${index}]: via chaos-mesh needs the scenario's chaosMesh`);
    try {
      out.push({ index, manifest: manifestFor(f, index, { ...ctx, chaosMesh: ctx.chaosMesh }) });
    } catch (e) {
      if (!(e instanceof RefusedFault)) throw e;
      refused.push(`faults[${index}] (${f.kind} on ${f.target}): ${e.message}`);
    }
  });
  if (refused.length) throw new RefusedFault(refused.join('\n'));
  return out;
}
