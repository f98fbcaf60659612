/**
 * Span roles (`../roles.ts`): spans that say no kind (Zipkin- or Jaeger-converted data, some
 * instrumentations) get the client/server roles their place in the tree shows — a child on another service or pod is
 * the server side of a remote call, its parent the client side when that call is all it did — so the gap, callee
 * booking and entry spans of the later passes work as with real kinds. Inferred kinds are marked
 * (`a.inferredKind`): evidence booked through such a call says so, and `missing` names it once.
 */
import type { TraceAccount } from '../account';
import { INFERRED_ROLES_NOTE, inferCallRoles } from '../roles';

export function spanRoles(a: TraceAccount): void {
  const r = inferCallRoles(a.tree);
  if (!r) return;
  a.spans = r.spans;
  a.tree.spans = r.spans;
  a.inferredKind = r.inferred;
  if (r.inferred.includes(1)) a.missing.push(INFERRED_ROLES_NOTE);
}
