/** Clock skew: a child on another host outside its parent's window is moved into it, with its subtree. */
import type { TraceAccount } from '../account';
import { correctClockSkew } from '../tree';

export function clockSkew(a: TraceAccount): void {
  correctClockSkew(a.tree);
}
