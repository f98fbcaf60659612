/**
 * Chaos Mesh resources through the Kubernetes API (@kubernetes/client-node's CustomObjectsApi): create, delete, and
 * list ours by label. The cluster is the kubeconfig's current context ($KUBECONFIG, else ~/.kube/config) or, inside
 * a pod, the in-cluster ServiceAccount, as kubectl finds it (KubeConfig.loadFromDefault).
 */
import { ApiException, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, RESOURCES, VERSION, type ChaosKind, type ChaosManifest } from './resources';

/** What the API said, in one line: `403 Forbidden: networkchaos.chaos-mesh.org is forbidden: …`. */
export class KubeError extends Error {
  constructor(
    readonly status: number | undefined,
    message: string
  ) {
    super(message);
  }
}

function kubeError(e: unknown, what: string): KubeError {
  if (e instanceof ApiException) {
    let reason = '';
    try {
      const body = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as { message?: string; reason?: string };
      reason = body?.message ?? body?.reason ?? '';
    } catch {
      reason = String(e.body ?? '').slice(0, 200);
    }
    return new KubeError(e.code, `${what}: the Kubernetes API answered ${e.code}${reason ? `: ${reason}` : ''}`);
  }
  const err = e as Error & { code?: string; cause?: { code?: string } };
  return new KubeError(
    undefined,
    `${what}: the Kubernetes API is unreachable (${err.cause?.code ?? err.code ?? err.message})`
  );
}

export interface ListedChaos {
  kind: ChaosKind;
  namespace: string;
  name: string;
  annotations: Record<string, string>;
}

export class ChaosMeshClient {
  private readonly api: CustomObjectsApi;
  readonly server: string;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.server = kc.getCurrentCluster()?.server ?? '(no cluster)';
  }

  /** $KUBECONFIG, ~/.kube/config or in-cluster; throws KubeError when none gives a cluster. */
  static fromDefault(): ChaosMeshClient {
    const kc = new KubeConfig();
    try {
      kc.loadFromDefault();
    } catch (e) {
      throw new KubeError(undefined, `no Kubernetes configuration: ${(e as Error).message}`);
    }
    if (!kc.getCurrentCluster())
      throw new KubeError(
        undefined,
        'no Kubernetes cluster: set KUBECONFIG (or ~/.kube/config with a current context), or run in a pod'
      );
    return new ChaosMeshClient(kc);
  }

  async create(m: ChaosManifest): Promise<void> {
    try {
      await this.api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: m.metadata.namespace,
        plural: RESOURCES[m.kind],
        body: m,
      });
    } catch (e) {
      throw kubeError(e, `creating ${m.kind} ${m.metadata.namespace}/${m.metadata.name}`);
    }
  }

  /** Deletes it; true when it was there, false when it was already gone (404). */
  async delete(kind: ChaosKind, namespace: string, name: string): Promise<boolean> {
    try {
      await this.api.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: RESOURCES[kind],
        name,
      });
      return true;
    } catch (e) {
      if (e instanceof ApiException && e.code === 404) return false;
      throw kubeError(e, `deleting ${kind} ${namespace}/${name}`);
    }
  }

  /** Every resource of the four kinds in the namespace matching the label selector. */
  async list(namespace: string, labelSelector: string): Promise<ListedChaos[]> {
    const out: ListedChaos[] = [];
    for (const kind of Object.keys(RESOURCES) as ChaosKind[]) {
      let res: { items?: Array<{ metadata?: { name?: string; annotations?: Record<string, string> } }> };
      try {
        res = (await this.api.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: RESOURCES[kind],
          labelSelector,
        })) as typeof res;
      } catch (e) {
        throw kubeError(e, `listing ${kind} in ${namespace}`);
      }
      for (const item of res.items ?? [])
        if (item.metadata?.name)
          out.push({ kind, namespace, name: item.metadata.name, annotations: item.metadata.annotations ?? {} });
    }
    return out;
  }
}
