/**
 * Call roles for spans that do not say their kind (Zipkin- and Jaeger-converted data, instrumentations that set none):
 * inferred from the tree, so the client→server gap, callee booking and entry spans work on any span shape.
 *
 * A span whose kind is unknown — `unspecified`, or `internal` on a service none of whose spans in the trace says
 * client, server, producer or consumer — takes its role from where it sits: a child on another service (or another
 * pod of the same service) is the server side of a remote call; its parent is the client side when that call is all
 * the parent did (its only child, and the parent is not itself the server side of a call: a span is one or the other,
 * and the server role is the one its position proves). A parent with other children stays what it was: its own work
 * and the unrecorded client side of the call are one time that nothing can split, and no timing is invented. A
 * kind-less leaf naming another service as its peer (`peer.service`: a Zipkin remote endpoint) is a call into it; a
 * kind-less root that is not a call is the server side of the request's entry.
 * Real kinds are kept; a trace where some services say kinds and others do not gets roles for the others only.
 */
import { declaredKindOfSpan, peerServiceOfSpan, podOfSpan, type Span } from '../../../contract';
import type { TraceTree } from './trace-tree';

export interface InferredRoles {
  /** The trace's spans with the inferred (or tag-declared) kinds: new objects where a kind changed, the rest as given. */
  spans: Span[];
  /** 1 = the span's kind was inferred from the tree (not said by the span). */
  inferred: Uint8Array;
  /** Client→server calls inferred (a parent made the client side of its only child). */
  calls: number;
}

const isRemoteKind = (k: Span['kind']): boolean =>
  k === 'client' || k === 'server' || k === 'producer' || k === 'consumer';

/** The missing-evidence note a trace with inferred calls carries (one wording, so a window counts it once). */
export const INFERRED_ROLES_NOTE =
  'span kinds: some spans say none (Zipkin- or Jaeger-converted data, or an instrumentation that sets none), so client→server calls were inferred from the tree: a child on another service or pod is the server side of a remote call, its parent the client side';

/**
 * Whether any span may need a role, cheaply (most traces say their kinds: no allocation per span): one is
 * `unspecified`, or a service with internal spans says no call kind anywhere in the trace.
 */
function needsRoles(spans: Span[]): boolean {
  let internal: Set<string> | undefined;
  for (const s of spans) {
    if (s.kind === 'unspecified') return true;
    if (s.kind === 'internal') (internal ??= new Set()).add(s.service);
  }
  if (!internal) return false;
  for (const s of spans) {
    if (isRemoteKind(s.kind) && internal.delete(s.service) && !internal.size) return false;
  }
  return true;
}

/**
 * The roles of the trace's kind-less spans (undefined when every span says its kind, the common case: one scan).
 * `t` is the linked tree (`linkSpans`) of the spans; they are not changed.
 */
export function inferCallRoles(t: TraceTree): InferredRoles | undefined {
  const { spans, parent, children } = t;
  const n = spans.length;
  if (!needsRoles(spans)) return undefined;
  const kind = spans.map(declaredKindOfSpan);
  // Services that say a call kind somewhere in this trace: their internal spans are internal.
  const speaks = new Set<string>();
  let last = '';
  for (let i = 0; i < n; i++) {
    if (!isRemoteKind(kind[i]) || spans[i].service === last) continue;
    last = spans[i].service;
    speaks.add(last);
  }
  const unknown = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const k = kind[i];
    if (k === 'unspecified' || (k === 'internal' && !speaks.has(spans[i].service))) unknown[i] = 1;
  }
  const pod = new Array<string | undefined>(n);
  const podAt = (i: number): string | undefined => (pod[i] ??= podOfSpan(spans[i]) ?? '');
  const remote = (i: number, p: number): boolean => {
    if (spans[i].service !== spans[p].service) return true;
    const a = podAt(i);
    const b = podAt(p);
    return !!a && !!b && a !== b;
  };
  const inferred = new Uint8Array(n);
  // Pass 1: the server sides (a position proves them). Pass 2: the client sides, only where no server role was taken.
  const isServerSide = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const p = parent[i];
    if (p < 0 || !remote(i, p)) continue;
    isServerSide[i] = 1;
    if (unknown[i]) {
      kind[i] = 'server';
      inferred[i] = 1;
    }
  }
  let calls = 0;
  for (let i = 0; i < n; i++) {
    const p = parent[i];
    if (!isServerSide[i] || p < 0 || !unknown[p] || isServerSide[p] || children[p].length !== 1) continue;
    kind[p] = 'client';
    inferred[p] = 1;
    calls++;
  }
  // A kind-less leaf that names another service as its remote peer (a Zipkin remote endpoint) called that service,
  // which reported nothing (a database, a cache): the client side of a call with no server span.
  for (let i = 0; i < n; i++) {
    if (!unknown[i] || kind[i] === 'client' || isServerSide[i] || children[i].length) continue;
    const peer = peerServiceOfSpan(spans[i]);
    if (peer === undefined || peer === spans[i].service) continue;
    kind[i] = 'client';
    inferred[i] = 1;
    calls++;
  }
  // A kind-less root (or orphan) that is not a call is where the request entered this trace: its server side.
  for (const r of t.roots) {
    if (!unknown[r] || kind[r] === 'client') continue;
    kind[r] = 'server';
    inferred[r] = 1;
  }
  let changed = false;
  for (let i = 0; i < n && !changed; i++) changed = kind[i] !== spans[i].kind;
  if (!changed) return undefined;
  const out = spans.slice();
  for (let i = 0; i < n; i++) if (kind[i] !== spans[i].kind) out[i] = { ...spans[i], kind: kind[i] };
  return { spans: out, inferred, calls };
}
