/**
 * What a query kind is: the parameters a panel's query carries, and how they become data frames. One file per kind
 * in kinds/ (a proxy call through src/api, validated with the contract's schemas, then a pure transform from
 * frames/), listed once in kinds/index.ts. See docs/DEVELOPING.md, "A new data source query kind".
 */
import type { DataFrame, DataQueryError, QueryResultMetaNotice } from '@grafana/data';

import type { ApiResult } from '../api/client';
import type { SourceStatus } from '../../contract';
import { sourceNotices, withNotices } from './frames/frame';

/** What a kind's run gets besides its parameters: the panel's time range (epoch ms) and the query's refId. */
export interface KindContext {
  from: number;
  to: number;
  refId: string;
}

/** Frames, or why there are none: an error becomes the panel's error, notices a warning next to its title. */
export type KindResult = { frames: DataFrame[]; error?: undefined } | { frames?: undefined; error: DataQueryError };

export interface QueryKind<P> {
  /** Runs one query of this kind. Never throws: a failed call is `{ error }`. */
  run(params: P, ctx: KindContext): Promise<KindResult>;
  /** Whether the kind uses the panel's time range (a trace or alert rules do not; the default is yes). */
  timeRange?: boolean;
}

/** Declares a kind; the type parameter is what a query of this kind must carry (checked where pages build queries). */
export function defineKind<P>(kind: QueryKind<P>): QueryKind<P> {
  return kind;
}

/**
 * The usual shape of a kind: one proxy answer → frames, with the answer's failed sources (`sources`) as notices and
 * a failed call as the panel's error (the proxy's own code and message).
 */
export async function answerFrames<T>(
  ctx: KindContext,
  answer: Promise<ApiResult<T>>,
  toFrames: (data: T) => DataFrame[],
  extraNotices: (data: T) => QueryResultMetaNotice[] = () => []
): Promise<KindResult> {
  const res = await answer;
  if (!res.ok) {
    const { error } = res;
    return { error: { refId: ctx.refId, message: `${error.message} (${error.code})`, status: error.status } };
  }
  const sources = (res.data as { sources?: SourceStatus[] }).sources;
  const frames = toFrames(res.data).map((f) => ({ ...f, refId: f.refId ?? ctx.refId }));
  return { frames: withNotices(frames, [...sourceNotices(sources), ...extraNotices(res.data)]) };
}

const inFlight = new Map<string, Promise<unknown>>();

/**
 * One call for identical concurrent requests (panels of one page asking the same answer in the same refresh, e.g. a
 * trace and its kernel evidence both needing the root cause): the promise is shared until it settles.
 */
export function shared<T>(key: string, call: () => Promise<T>): Promise<T> {
  const existing = inFlight.get(key) as Promise<T> | undefined;
  if (existing) {
    return existing;
  }
  const p = call().finally(() => inFlight.delete(key));
  inFlight.set(key, p);
  return p;
}
