/**
 * How the exporter reaches the Kubernetes API: in-cluster (the pod's ServiceAccount token and CA, at
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT) or a kubeconfig file (HOPSCOPE_BPF_KUBECONFIG: its current
 * context's cluster and user). Only what a read-only watcher needs: server URL, CA, client certificate or bearer token.
 * The token is re-read from its file every minute: bound ServiceAccount tokens are rotated by the kubelet.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

export interface KubeConnection {
  source: 'in-cluster' | 'kubeconfig';
  /** Base URL, e.g. https://10.96.0.1:443. */
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecureSkipTlsVerify?: boolean;
  /** The bearer token to send now (undefined: client certificate only). */
  token(): string | undefined;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_REREAD_MS = 60_000;

function fileToken(path: string): () => string | undefined {
  let value: string | undefined;
  let readAt = 0;
  return () => {
    if (Date.now() - readAt > TOKEN_REREAD_MS) {
      try { value = readFileSync(path, 'utf8').trim(); readAt = Date.now(); } catch { /* keep the last one */ }
    }
    return value;
  };
}

export function inClusterConnection(env: NodeJS.ProcessEnv, saDir = SA_DIR): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST!;
  const port = env.KUBERNETES_SERVICE_PORT || '443';
  let ca: Buffer | undefined;
  try { ca = readFileSync(`${saDir}/ca.crt`); } catch { /* the request fails with the TLS reason, shown in /health */ }
  return {
    source: 'in-cluster',
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca,
    token: fileToken(`${saDir}/token`),
  };
}

type Named<T> = { name: string } & T;
interface Kubeconfig {
  'current-context'?: string;
  contexts?: Array<Named<{ context: { cluster: string; user?: string } }>>;
  clusters?: Array<Named<{ cluster: Record<string, unknown> }>>;
  users?: Array<Named<{ user: Record<string, unknown> }>>;
}

/** Reads a kubeconfig; throws with the reason (a missing context, an exec plugin) so the config error names it. */
export function kubeconfigConnection(path: string): KubeConnection {
  const doc = parse(readFileSync(path, 'utf8')) as Kubeconfig;
  const base = dirname(path);
  const rel = (p: unknown): string => (isAbsolute(String(p)) ? String(p) : resolve(base, String(p)));
  const ctxName = doc['current-context'] ?? doc.contexts?.[0]?.name;
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`${path}: no context "${ctxName ?? ''}"`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster || typeof cluster.server !== 'string') throw new Error(`${path}: cluster "${ctx.cluster}" has no server`);
  const user = (ctx.user ? doc.users?.find((u) => u.name === ctx.user)?.user : undefined) ?? {};
  if (user.exec || user['auth-provider']) throw new Error(`${path}: user "${ctx.user}" needs a credential plugin, which the exporter does not run; give it a token, tokenFile or client certificate`);
  const bytes = (data: unknown, file: unknown): Buffer | undefined =>
    typeof data === 'string' ? Buffer.from(data, 'base64') : typeof file === 'string' ? readFileSync(rel(file)) : undefined;
  const token = typeof user.token === 'string' ? user.token : undefined;
  return {
    source: 'kubeconfig',
    server: cluster.server.replace(/\/+$/, ''),
    ca: bytes(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: bytes(user['client-certificate-data'], user['client-certificate']),
    key: bytes(user['client-key-data'], user['client-key']),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    token: typeof user.tokenFile === 'string' ? fileToken(rel(user.tokenFile)) : () => token,
  };
}
