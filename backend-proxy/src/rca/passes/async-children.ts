/**
 * Async children: windows clamped into their parents'; producer/consumer spans, children starting after their
 * parent ended and same-service children outliving a parent that did not fail are not waited for.
 */
import type { TraceAccount } from '../account';
import { clampToParents } from '../tree';

export function asyncChildren(a: TraceAccount): void {
  clampToParents(a.tree, a.config.asyncToleranceMs);
}
