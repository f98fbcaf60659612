/**
 * How the exporter reaches the Kubernetes API, as a @kubernetes/client-node KubeConfig: in-cluster (`loadFromCluster`:
 * the pod's ServiceAccount token and CA, at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT) or a kubeconfig file
 * (HOPSCOPE_BPF_KUBECONFIG, `loadFromFile`: its current context's cluster and user). The library applies the CA,
 * client certificate and token to every list and watch. Two things it does not do the way a watcher on a node needs:
 *   - client-go's `tokenFile` user key (the library knows only its own `token-file`, read once): served here by an
 *     authenticator that re-reads the file every minute, as the library's in-cluster token file is (bound tokens
 *     rotate);
 *   - credential plugins (`exec`, `auth-provider`) would run commands from a kubeconfig inside a root eBPF exporter:
 *     refused with the reason.
 */
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { dirname, isAbsolute, resolve } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';

export interface KubeConnection {
  source: 'in-cluster' | 'kubeconfig';
  /** Base URL, e.g. https://10.96.0.1:443. */
  server: string;
  /** The library's view of cluster and user; the informer's list and watch go through it. */
  kubeConfig: KubeConfig;
}

const TOKEN_REREAD_MS = 60_000;
/** The library's authenticator interface (not exported by name). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** A kubeconfig user's `tokenFile` (client-go's key), re-read every minute and trimmed; the last good one is kept. */
class TokenFileAuth implements Authenticator {
  private value?: string;
  private readAt = 0;
  constructor(
    private readonly userName: string,
    private readonly path: string
  ) {}
  isAuthProvider(user: User): boolean {
    return user.name === this.userName;
  }
  async applyAuthentication(_user: User, opts: RequestOptions): Promise<void> {
    if (Date.now() - this.readAt > TOKEN_REREAD_MS) {
      try {
        this.value = readFileSync(this.path, 'utf8').trim();
        this.readAt = Date.now();
      } catch {
        /* keep the last one */
      }
    }
    if (this.value) opts.headers = { ...opts.headers, Authorization: `Bearer ${this.value}` };
  }
}

/** `server` without trailing slashes: the library joins it with the request path as is. */
function connection(source: KubeConnection['source'], kc: KubeConfig): KubeConnection {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new Error(`${source}: no cluster server`);
  const server = cluster.server.replace(/\/+$/, '');
  if (server !== cluster.server) {
    kc.loadFromOptions({
      clusters: kc.getClusters().map((c) => (c.name === cluster.name ? { ...c, server } : c)),
      contexts: kc.getContexts(),
      users: kc.getUsers(),
      currentContext: kc.getCurrentContext(),
    });
  }
  return { source, server, kubeConfig: kc };
}

export function inClusterConnection(env: NodeJS.ProcessEnv = process.env): KubeConnection {
  if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT)
    throw new Error('in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set');
  const kc = new KubeConfig();
  // The CA and token are read when a request is made: a missing file fails that request, and /health says why.
  kc.loadFromCluster();
  return connection('in-cluster', kc);
}

type Named<T> = { name: string } & T;
interface RawKubeconfig {
  'current-context'?: string;
  contexts?: Array<Named<{ context?: { user?: string } }>>;
  users?: Array<Named<{ user?: Record<string, unknown> }>>;
}

/** Reads a kubeconfig; throws with the reason (no context, a credential plugin) so /health names it. */
export function kubeconfigConnection(path: string): KubeConnection {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  // No current-context: the first context, as kubectl's single-context files are often written.
  if (!kc.getCurrentContext() && kc.getContexts()[0]) kc.setCurrentContext(kc.getContexts()[0].name);
  const ctx = kc.getContextObject(kc.getCurrentContext());
  if (!ctx) throw new Error(`${path}: no context "${kc.getCurrentContext() ?? ''}"`);
  if (!kc.getCurrentCluster())
    throw new Error(`${path}: context "${ctx.name}" names no known cluster "${ctx.cluster}"`);
  const user = kc.getCurrentUser();
  if (user?.exec || user?.authProvider)
    throw new Error(
      `${path}: user "${ctx.user}" needs a credential plugin, which the exporter does not run; give it a token, tokenFile or client certificate`
    );
  const raw = (parse(readFileSync(path, 'utf8')) ?? {}) as RawKubeconfig;
  const tokenFile = raw.users?.find((u) => u.name === ctx.user)?.user?.tokenFile;
  if (user && typeof tokenFile === 'string' && !user.token) {
    kc.addAuthenticator(
      new TokenFileAuth(user.name, isAbsolute(tokenFile) ? tokenFile : resolve(dirname(path), tokenFile))
    );
  }
  return connection('kubeconfig', kc);
}
