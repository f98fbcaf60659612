/**
 * The queries panels send to Hopscope's runtime data source: `{ refId, kind, …params }`, typed per kind from the
 * registry (kinds/), so a page cannot build a query its kind does not understand. Parameter values may name a
 * scene variable (`'$backend'`): the data source resolves it, All or empty meaning "no filter".
 */
import type { DataQuery } from '@grafana/schema';

import type { QueryKind } from './kind';

/** The data source's uid and type: one instance, registered at runtime (register.ts). */
export const HOPSCOPE_DATASOURCE = { uid: 'hopscope-proxy', type: 'hopscope-proxy' } as const;

/**
 * Every kind of the registry by name, filled in by kinds/index.ts (declaration merging), so this module imports no kind
 * (the kinds' frames import `partRefId` from here).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface QueryKindRegistry {}

type Kinds = QueryKindRegistry;
export type QueryKindName = keyof Kinds;
export type QueryParams<K extends QueryKindName> = Kinds[K] extends QueryKind<infer P> ? P : never;

/** A query of kind K (params may be variable references, resolved by the data source). */
export type HopscopeQuery<K extends QueryKindName = QueryKindName> = DataQuery & { kind: K } & QueryParams<K>;

/** Builds a query of one kind: `hopscopeQuery('pods', { service: 'rag' })`; the refId defaults to the kind. */
export function hopscopeQuery<K extends QueryKindName>(
  kind: K,
  params: QueryParams<K>,
  refId: string = kind
): HopscopeQuery<K> {
  return { refId, datasource: { ...HOPSCOPE_DATASOURCE }, kind, ...(params as object) } as HopscopeQuery<K>;
}

/**
 * A kind that returns several parts (the golden metrics one series group per metric, a pod's events and their TLS
 * histogram) gives each part the refId `<query refId>:<part>`, so a panel picks its part with Grafana's standard
 * `filterByRefId` transformation (see scenes/panels.ts `partOf`).
 */
export const partRefId = (refId: string, part: string): string => `${refId}:${part}`;
