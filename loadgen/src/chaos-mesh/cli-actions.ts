/**
 * What hopscope-load's command line does with Chaos Mesh: check a scenario's chaos-mesh faults when it is parsed
 * (a kind without an equivalent is a usage error naming the alternative), print the manifests for `--dry-run`,
 * remove a run's resources for `--cleanup RUN_ID`, and, before a run, connect and sweep what dead runs left.
 */
import { hostname } from 'node:os';
import { stringify } from 'yaml';
import type { Scenario } from '../../../contract/scenario';
import { ChaosMeshClient } from './client';
import { cleanupRun } from './cleanup';
import { manifestsFor, RefusedFault } from './manifests';
import { ChaosMeshFaults, EXPIRY_GRACE_S } from './schedule-backend';
import type { ChaosManifest } from './resources';

export const hasChaosMeshFaults = (sc: Scenario): boolean => sc.faults.some((f) => f.via === 'chaos-mesh');

/** The manifests of the scenario's chaos-mesh faults for this run id; throws RefusedFault with every refusal. */
export function scenarioManifests(sc: Scenario, runId: string): ChaosManifest[] {
  return manifestsFor(sc.faults, {
    runId,
    chaosMesh: sc.chaosMesh,
    owner: `${hostname()}/${process.pid}`,
    expiresAt: new Date(Date.now() + (sc.load.duration + EXPIRY_GRACE_S) * 1000),
    requestTimeoutS: sc.request.timeout,
  }).map((m) => m.manifest);
}

/** The manifests as YAML documents (`---` before each), what `--dry-run` prints on stdout. */
export function manifestsYaml(manifests: ChaosManifest[]): string {
  return manifests.map((m) => `---\n${stringify(m, { lineWidth: 0 })}`).join('');
}

export { RefusedFault };

/** `--cleanup RUN_ID`: deletes the run's resources in these namespaces; exit 0 done (even none), 1 the API failed. */
export async function cleanupCommand(
  runId: string,
  namespaces: string[],
  out: (s: string) => void,
  err: (s: string) => void,
  client?: ChaosMeshClient
): Promise<number> {
  try {
    const c = client ?? ChaosMeshClient.fromDefault();
    const removed = await cleanupRun(c, namespaces, runId);
    for (const r of removed) out(`deleted ${r.resource}\n`);
    out(`${removed.length} Chaos Mesh resource(s) of run ${runId} removed from ${namespaces.join(', ')}\n`);
    return 0;
  } catch (e) {
    err(`hopscope-load: cleanup of run ${runId} failed: ${(e as Error).message}\n`);
    return 1;
  }
}

/**
 * Before a run with chaos-mesh faults: the cluster from the kubeconfig (or in-cluster), the manifests, and the stale
 * resources of dead runs swept. Throws with the reason (no cluster, the API refused the listing) so the run stops
 * before sending anything.
 */
export async function prepareChaosMesh(
  sc: Scenario,
  runId: string,
  warn: (m: string) => void,
  client?: ChaosMeshClient
): Promise<ChaosMeshFaults | undefined> {
  if (!hasChaosMeshFaults(sc) || !sc.chaosMesh) return undefined;
  const c = client ?? ChaosMeshClient.fromDefault();
  const faults = ChaosMeshFaults.forRun(c, sc.chaosMesh, sc.faults, {
    runId,
    durationS: sc.load.duration,
    requestTimeoutS: sc.request.timeout,
  });
  for (const r of await faults.sweep()) warn(`removed a stale Chaos Mesh resource, ${r.resource}: ${r.why}`);
  return faults;
}
