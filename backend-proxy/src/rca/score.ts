/** Turns hop accounts into ranked, explained candidates (shared by the per-trace and the window answers). */
import {
  type Candidate,
  type Evidence,
  KERNEL_EVENT_TYPES,
  type KernelEvent,
  type KernelEventType,
  kernelEvidenceKind,
} from '../../../contract';
import type { HopAccount } from './account';
import { fmtMs } from './format';
import type { RcaConfig } from './config';
import { eventSeverity } from './kernel';

interface KernelSummary {
  severity: number;
  evidence: Evidence[];
}

/** Groups a hop's joined events by type into evidence; routine events (fast handshakes) are not evidence. */
function kernelEvidence(h: HopAccount, events: KernelEvent[], c: RcaConfig, perTraces = 1): KernelSummary {
  const byType = new Map<
    KernelEventType,
    { n: number; byTrace: number; link: number; sev: number; maxDur: number; from: number; to: number }
  >();
  // Per-type sums, min and max do not depend on the order: no need to sort thousands of indexes.
  h.kernel.forEach((how, i) => {
    const e = events[i];
    const sev = eventSeverity(e, c);
    if (sev <= 0) return;
    let g = byType.get(e.type);
    if (!g) byType.set(e.type, (g = { n: 0, byTrace: 0, link: 0, sev: 0, maxDur: 0, from: e.ts, to: e.ts }));
    g.n++;
    if (how === 'trace') g.byTrace++;
    else if (how === 'link') g.link++;
    g.sev += sev;
    g.maxDur = Math.max(g.maxDur, e.durationMs ?? 0);
    g.from = Math.min(g.from, e.ts);
    g.to = Math.max(g.to, e.ts);
  });
  let severity = 0;
  const evidence: Evidence[] = [];
  for (const type of [...byType.keys()].sort()) {
    const g = byType.get(type)!;
    severity += g.sev;
    const { one, many } = KERNEL_EVENT_TYPES[type].noun;
    const dur = g.maxDur > 0 ? ` (longest ${fmtMs(g.maxDur)})` : '';
    const joined =
      (g.byTrace ? `; ${g.byTrace} carried this trace's id` : '') +
      (g.link
        ? `; ${g.link} sent to ${h.service}'s port by a caller outside the trace (in the ${fmtMs(c.kernelLookbackMs)} before its span or during it): the client waited for ${g.link === 1 ? 'it' : 'them'}, a wait the trace cannot show`
        : '');
    evidence.push({
      kind: kernelEvidenceKind(type),
      summary: `${g.n} ${g.n === 1 ? one : many}${dur} on pod ${h.pod}${g.link === g.n ? '' : ' during its spans'}${joined}`,
      count: g.n,
      fromMs: g.from,
      toMs: g.to,
    });
  }
  return { severity: Math.min(1, severity / perTraces), evidence };
}

export interface ScoredHop {
  h: HopAccount;
  score: number;
  evidence: Evidence[];
}

/**
 * score = λ·excess ÷ end-to-end time (the share of the request this hop's anomaly explains)
 *       + error/timeout origin (≤ 1) + degradation the span reports (KV-cache drop, ≤ 0.05) + kernel evidence (≤ 0.5, ×0.4 when nothing else at the hop is anomalous and no event is tied to it by trace id or destination)
 *       + 0.05 per broken propagation + 0.001·share of the critical path (an order among otherwise equal hops).
 */
export function scoreHop(
  h: HopAccount,
  totalMs: number,
  events: KernelEvent[] | undefined,
  c: RcaConfig,
  weights: { error?: number; degradation?: number; propagation?: number; traces?: number } = {}
): ScoredHop {
  const errorWeight = weights.error ?? h.errorScore;
  const propagation = weights.propagation ?? 0.05 * Math.min(h.propagationBreaks, 4);
  const latency = h.weightedExcessMs / Math.max(totalMs, 1e-6);
  // In a window, kernel severity is per trace: stray retransmits add up over hundreds of traces without meaning much.
  const k = events ? kernelEvidence(h, events, c, weights.traces ?? 1) : { severity: 0, evidence: [] };
  // Joined by trace id, or resent to an entry span's own port (the trace cannot show that wait): no further proof needed.
  let corroborated = latency > 0.01 || errorWeight > 0;
  if (!corroborated)
    for (const [, how] of h.kernel)
      if (how !== 'window') {
        corroborated = true;
        break;
      }
  const kernel = 0.5 * k.severity * (corroborated ? 1 : 0.4);
  const degradation = weights.degradation ?? h.degradation;
  const score =
    latency +
    errorWeight +
    degradation +
    kernel +
    propagation +
    0.001 * Math.min(1, h.onPathMs / Math.max(totalMs, 1e-6));
  return { h, score: Math.round(score * 1e6) / 1e6, evidence: [...h.evidence, ...k.evidence] };
}

export function rankScored(
  scored: ScoredHop[],
  c: RcaConfig,
  extra?: (s: ScoredHop) => Partial<Candidate>
): Candidate[] {
  const sorted = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.h.service.localeCompare(b.h.service) || a.h.pod.localeCompare(b.h.pod));
  return sorted.slice(0, c.maxCandidates).map((s, i) => {
    const cand: Candidate = {
      rank: i + 1,
      service: s.h.service,
      pod: s.h.pod,
      score: s.score,
      evidence: s.evidence.length
        ? s.evidence
        : [
            {
              kind: 'critical_path_share',
              summary: `${fmtMs(s.h.onPathMs)} on the critical path, within its baseline: no anomaly found here`,
            },
          ],
      ...(extra ? extra(s) : {}),
    };
    if (s.h.spanId) cand.spanId = s.h.spanId;
    if (s.h.operation) cand.operation = s.h.operation;
    if (s.h.selfMs > 0 || s.h.onPathMs > 0) cand.selfMs = Math.round(s.h.selfMs * 1000) / 1000;
    if (s.h.hasBaseline && s.h.baselineMs > 0) cand.baselineMs = Math.round(s.h.baselineMs * 1000) / 1000;
    return cand;
  });
}
