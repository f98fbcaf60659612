/**
 * The Chaos Mesh custom resources hopscope-load creates (chaos-mesh.org/v1alpha1, as in Chaos Mesh v2.8.3's
 * config/crd/bases/chaos-mesh.org_*.yaml, https://github.com/chaos-mesh/chaos-mesh at
 * 60ec97f1fd5d5edb2fb5c722c8888e18b618d1a0), and the labels and annotations that tie each one to its run.
 */
import { createHash } from 'node:crypto';

export const GROUP = 'chaos-mesh.org';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Kind → plural (the CRD's spec.names). */
export const RESOURCES = {
  NetworkChaos: 'networkchaos',
  HTTPChaos: 'httpchaos',
  StressChaos: 'stresschaos',
  PodChaos: 'podchaos',
} as const;
export type ChaosKind = keyof typeof RESOURCES;
export const CHAOS_KINDS = Object.keys(RESOURCES) as ChaosKind[];

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'hopscope-load';
export const RUN_ID_LABEL = 'hopscope.io/run-id';
/** The run id as given (a label value cannot hold every run id), the worker that owns it, and when it is stale. */
export const RUN_ID_ANNOTATION = 'hopscope.io/run-id';
export const OWNER_ANNOTATION = 'hopscope.io/owner';
export const EXPIRES_ANNOTATION = 'hopscope.io/expires-at';
export const FAULT_ANNOTATION = 'hopscope.io/fault';

const LABEL_VALUE_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** The run id as a label value: itself when it is one (≤ 63 chars, no `:`), else `h-` and 20 hex of its SHA-256. */
export function runIdLabel(runId: string): string {
  return LABEL_VALUE_RE.test(runId) ? runId : `h-${createHash('sha256').update(runId).digest('hex').slice(0, 20)}`;
}

/** `app.kubernetes.io/managed-by=hopscope-load[,hopscope.io/run-id=…]`. */
export function labelSelector(runId?: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY}${runId !== undefined ? `,${RUN_ID_LABEL}=${runIdLabel(runId)}` : ''}`;
}

/** A DNS-1123 name ≤ 63 chars: `hopscope-<run id slug>-<n>-<kind>`, the slug shortened with a hash when needed. */
export function resourceName(runId: string, index: number, kind: string): string {
  const tail = `-${index}-${kind.replace(/_/g, '-')}`;
  let slug = runId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const room = 63 - 'hopscope-'.length - tail.length;
  if (slug.length > room) {
    const h = createHash('sha256').update(runId).digest('hex').slice(0, 8);
    slug = `${slug.slice(0, room - 9).replace(/-+$/, '')}-${h}`;
  }
  return `hopscope-${slug || 'run'}${tail}`;
}

export interface ChaosManifest {
  apiVersion: typeof API_VERSION;
  kind: ChaosKind;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: Record<string, unknown>;
}

/** `NetworkChaos ns/name`: how a run record names the resource. */
export const describeResource = (m: Pick<ChaosManifest, 'kind' | 'metadata'>): string =>
  `${m.kind} ${m.metadata.namespace}/${m.metadata.name}`;
