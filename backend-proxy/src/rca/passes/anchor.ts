/**
 * Anchor: the span the delay is measured from. The root if it failed, timed out, served a degraded answer or
 * breached its SLO (`sloMs[service]`, else baseline p99 × `sloFactor`), or — with no explicit SLO — if its duration is
 * far outside its usual spread (robust z ≥ `zThreshold`: p99 of a small healthy sample is set by one cold start);
 * otherwise the span that frames every span of the worst class under it (timeouts, else failures, else breaches: their
 * lowest common ancestor), so a breach in one branch does not hide another branch's — and every degraded answer (a
 * model fallback) under the root with them, so the slow branch does not hide the degraded one either.
 */
import { type TraceAccount, opAt } from '../account';
import { fmtMs } from '../format';
import { robustZ } from '../stats';

const NONE = 9;

export function anchor(a: TraceAccount): void {
  const { spans, tree: t, config: c, root } = a;
  const n = spans.length;
  const sloOf = (i: number): number | undefined => {
    const explicit = c.sloMs[spans[i].service];
    if (explicit !== undefined) return explicit;
    const b = opAt(a, i);
    return b && b.duration.count >= 5 ? b.duration.p99 * c.sloFactor : undefined;
  };
  const breach = (i: number): boolean => {
    const slo = sloOf(i);
    return slo !== undefined && t.end[i] - t.start[i] > slo;
  };
  const rootZ = (): number => {
    const b = c.sloMs[spans[root].service] === undefined ? opAt(a, root) : undefined;
    if (!b || b.duration.count < 5) return -Infinity;
    const dur = t.end[root] - t.start[root];
    return dur - b.duration.median >= c.minExcessMs ? robustZ(dur, b.duration, c.madFloorRatio) : -Infinity;
  };
  let anchorAt = root;
  let reason = 'trace root';
  const rootSpan = spans[root];
  if (rootSpan.status === 'timeout') reason = 'the root span timed out';
  else if (rootSpan.status === 'error') reason = 'the root span failed';
  else if (a.degraded[root])
    reason = `the root span ${a.degradations.find((d) => d.index === root)?.what ?? 'served a degraded answer'}`;
  else if (breach(root)) reason = `the root span breached its SLO (${fmtMs(sloOf(root)!)})`;
  else if (rootZ() >= c.zThreshold) {
    // No explicit SLO and p99 × sloFactor of a small healthy sample is loose (one cold start sets it): a root far
    // outside its usual spread is the slow request, by the same robust test every hop gets.
    const d = opAt(a, root)!.duration;
    reason = `the root span took ${fmtMs(t.end[root] - t.start[root])} vs ${fmtMs(d.median)} usually (z=${rootZ().toFixed(1)})`;
  } else {
    // Every span of the worst class, and the span that frames them all: a breach in one branch must not hide another
    // branch's (two slow hops under a healthy-looking root). Degraded answers are framed too, whatever the class.
    const inRoot = new Uint8Array(n);
    inRoot[root] = 1;
    const rankOf = new Uint8Array(n).fill(NONE);
    let found = NONE;
    let degradedUnder = 0;
    for (const i of t.order) {
      if (i !== root && t.parent[i] >= 0 && inRoot[t.parent[i]]) inRoot[i] = 1;
      if (i === root || !inRoot[i]) continue;
      const st = spans[i].status;
      // A breach is only looked for while nothing worse was found: it is the one test that costs a lookup.
      const rank = st === 'timeout' ? 0 : st === 'error' ? 1 : found < 2 ? NONE : breach(i) ? 2 : NONE;
      rankOf[i] = rank;
      if (rank < found) found = rank;
      if (a.degraded[i]) degradedUnder++;
    }
    if (found < NONE) {
      const marked = (i: number): boolean => rankOf[i] === found || a.degraded[i] === 1;
      // Lowest common ancestor in O(n): count marked spans per subtree, then descend while one child holds them all.
      const below = new Int32Array(n);
      let total = 0;
      for (let q = t.order.length - 1; q >= 0; q--) {
        const i = t.order[q];
        if (!inRoot[i]) continue;
        if (marked(i)) {
          below[i]++;
          total++;
        }
        if (i !== root && t.parent[i] >= 0) below[t.parent[i]] += below[i];
      }
      let at = root;
      for (;;) {
        if (marked(at)) break;
        const next = t.children[at].find((ch) => below[ch] === total);
        if (next === undefined) break;
        at = next;
      }
      anchorAt = at;
      const what =
        ['timed out', 'failed', 'breached their SLO'][found] + (degradedUnder ? ' or served a degraded answer' : '');
      reason =
        total === 1 || rankOf[at] === found
          ? ['a span timed out', 'a span failed', 'a span breached its SLO'][found]
          : `${total} spans ${what}; the anchor is the span that frames them all`;
    } else if (degradedUnder) {
      // Nothing failed or breached: the whole request is the degraded one.
      const d = a.degradations.find((x) => inRoot[x.index]);
      reason =
        degradedUnder === 1 && d
          ? `a span under the root ${d.what}`
          : `${degradedUnder} spans under the root served a degraded answer`;
    }
  }
  a.anchor = anchorAt;
  a.anchorReason = reason;
  a.anchorDurationMs = Math.max(t.cEnd[anchorAt] - t.cStart[anchorAt], 1e-6);
  a.inAnchor[anchorAt] = 1;
  for (const i of t.order) if (i !== anchorAt && t.parent[i] >= 0 && a.inAnchor[t.parent[i]]) a.inAnchor[i] = 1;
}
