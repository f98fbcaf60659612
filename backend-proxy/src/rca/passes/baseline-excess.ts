/**
 * Baseline excess: per on-path span, its exclusive time against its operation's healthy median/MAD (an excess
 * counts when robust z ≥ `zThreshold` and ≥ `minExcessMs`, only the part on the critical path); no baseline: all of
 * its on-path own time, at half weight, and `missing` says so. Each span's own time is booked on its hop — a client
 * span's on the callee (the network side into it), unless the caller's calls to ≥ 2 services all show a grown gap:
 * then the caller is slow on the client side.
 */
import { podOrServiceOfSpan } from '../../../../contract';
import { type TraceAccount, bookingHop, hopKey, hopOfSpan, opAt } from '../account';
import { round } from '../format';
import { robustZ } from '../stats';

export function baselineExcess(a: TraceAccount): void {
  const { spans, tree: t, config: c, path, onPathMs, excessMs, z } = a;
  for (const i of path) {
    const b = opAt(a, i);
    if (!b) {
      excessMs[i] = onPathMs[i] * 0.5;
      z[i] = NaN;
      continue;
    }
    const self = t.self[i];
    z[i] = robustZ(self, b.self, c.madFloorRatio);
    excessMs[i] =
      z[i] >= c.zThreshold && self - b.self.median >= c.minExcessMs ? Math.min(self - b.self.median, onPathMs[i]) : 0;
  }

  // A caller whose calls to several different services all show a grown client→server gap is itself slow on the
  // client side (CPU starvation, connection pool, its own egress): blame it, not each callee. A callee that served a
  // degraded answer (a fallback model) explains its own call's delay: it is no witness against the caller.
  let gapByCaller: Map<string, Map<string, number>> | undefined;
  for (const i of path) {
    if (
      spans[i].kind !== 'client' ||
      t.serverChild[i] < 0 ||
      excessMs[i] <= 0 ||
      a.degraded[t.serverChild[i]] ||
      !opAt(a, i)
    )
      continue;
    const ck = hopKey(spans[i].service, podOrServiceOfSpan(spans[i]));
    gapByCaller ??= new Map();
    let m = gapByCaller.get(ck);
    if (!m) gapByCaller.set(ck, (m = new Map()));
    const callee = spans[t.serverChild[i]].service;
    m.set(callee, Math.max(m.get(callee) ?? 0, excessMs[i]));
  }
  for (const [ck, m] of gapByCaller ?? []) {
    let max = 0;
    for (const v of m.values()) max = Math.max(max, v);
    let grown = 0;
    for (const v of m.values()) if (v >= 0.25 * max) grown++;
    if (grown >= 2) a.slowCallers.set(ck, m.size);
  }

  const noBaselineOps = new Set<string>();
  for (let k = 0; k < path.length; k++) {
    const i = path[k];
    const s = spans[i];
    const b = opAt(a, i);
    const callerSide =
      a.slowCallers.size > 0 &&
      s.kind === 'client' &&
      t.serverChild[i] >= 0 &&
      a.slowCallers.has(hopKey(s.service, podOrServiceOfSpan(s)));
    if (callerSide) a.callerSide[i] = 1;
    const h = callerSide ? hopOfSpan(a, i) : bookingHop(a, i);
    a.bookedOn[i] = h;
    h.onPathMs += onPathMs[i];
    h.selfMs += t.self[i];
    if (b) {
      h.baselineMs += b.self.median;
      a.criticalPath[k].baselineSelfMs = round(b.self.median);
    } else {
      h.hasBaseline = false;
      noBaselineOps.add(`${s.service} ${s.kind} "${s.name}"`);
    }
  }
  if (noBaselineOps.size) {
    const list = [...noBaselineOps].sort();
    a.missing.push(
      `baseline for ${list.length} operation(s): ${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}`
    );
  }
}
