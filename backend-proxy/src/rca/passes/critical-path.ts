/**
 * Critical path: walked backwards from the anchor's end (`criticalPath` in ../tree.ts); each span's time on
 * it, and the on-path spans in order of first appearance — with the ancestors the path went through without own time
 * (a server span its children cover), which still frame it.
 */
import type { TraceAccount } from '../account';
import { criticalPath as walk } from '../tree';

export function criticalPath(a: TraceAccount): void {
  const { tree: t, anchor, onPathMs, path } = a;
  const seen = new Uint8Array(t.spans.length);
  const chain = new Int32Array(t.spans.length);
  for (const sg of walk(t, anchor)) {
    if (!seen[sg.index]) {
      let top = 0;
      for (let i = sg.index; i >= 0 && !seen[i]; i = i === anchor ? -1 : t.parent[i]) {
        seen[i] = 1;
        chain[top++] = i;
      }
      while (top > 0) path.push(chain[--top]);
    }
    onPathMs[sg.index] += sg.endMs - sg.startMs;
  }
}
