/**
 * The fault schedule's Chaos Mesh side: at its time, a fault's manifest is created in the cluster; at the end (or on
 * SIGINT/SIGTERM, through the schedule's stop) it is deleted, even when Chaos Mesh has already ended the experiment
 * (the object stays until deleted). The id a run records is `Kind/namespace/name`.
 */
import { hostname } from 'node:os';
import type { ChaosMeshTarget } from '../../../contract/faults';
import type { ScenarioFault } from '../../../contract/scenario';
import { ChaosMeshClient } from './client';
import { namespacesOf, sweepStale, type Removed } from './cleanup';
import { manifestsFor } from './manifests';
import { describeResource, type ChaosKind, type ChaosManifest } from './resources';

/** Seconds a resource outlives its run's planned end before any later run may remove it. */
export const EXPIRY_GRACE_S = 300;

export class ChaosMeshFaults {
  private readonly byIndex = new Map<number, ChaosManifest>();

  constructor(
    private readonly client: ChaosMeshClient,
    readonly chaosMesh: ChaosMeshTarget,
    manifests: Array<{ index: number; manifest: ChaosManifest }>
  ) {
    for (const m of manifests) this.byIndex.set(m.index, m.manifest);
  }

  /** For a run: the manifests of its chaos-mesh faults (throws RefusedFault), owned by this process. */
  static forRun(
    client: ChaosMeshClient,
    chaosMesh: ChaosMeshTarget,
    faults: ScenarioFault[],
    run: { runId: string; durationS: number; requestTimeoutS: number }
  ): ChaosMeshFaults {
    const manifests = manifestsFor(faults, {
      runId: run.runId,
      chaosMesh,
      owner: `${hostname()}/${process.pid}`,
      expiresAt: new Date(Date.now() + (run.durationS + EXPIRY_GRACE_S) * 1000),
      requestTimeoutS: run.requestTimeoutS,
    });
    return new ChaosMeshFaults(client, chaosMesh, manifests);
  }

  /** Removes what dead or expired runs left in this scenario's namespaces. */
  sweep(): Promise<Removed[]> {
    return sweepStale(this.client, namespacesOf(this.chaosMesh), hostname());
  }

  /** Creates the fault's resource; returns its id and description. Throws KubeError. */
  async apply(index: number): Promise<{ id: string; resource: string }> {
    const m = this.byIndex.get(index);
    if (!m) throw new Error(`no Chaos Mesh manifest for fault ${index}`);
    await this.client.create(m);
    return { id: `${m.kind}/${m.metadata.namespace}/${m.metadata.name}`, resource: describeResource(m) };
  }

  /** Deletes it by the id apply returned; false when it was already gone. Throws KubeError. */
  remove(id: string): Promise<boolean> {
    const [kind, namespace, name] = id.split('/');
    return this.client.delete(kind as ChaosKind, namespace, name);
  }
}
