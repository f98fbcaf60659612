/**
 * λ: each on-path excess weighted by its hop type (`../lambda.ts`: long embedding inputs are expected to be
 * slow, a thrashing KV cache is not) and added to its hop; the worst span per hop and kind is spelled out as evidence,
 * with a count of the others (a 50k-span trace with a slow hop called 10k times must not build 10k sentences).
 */
import { type EvidenceKind, podOrServiceOfSpan } from '../../../../contract';
import { type HopAccount, type TraceAccount, hopKey, inferredCall, noteInferredCall, opAt } from '../account';
import { fmtMs, round } from '../format';
import { lambdaFor } from '../lambda';

interface Note {
  i: number;
  excess: number;
  lambda: number;
  reasons: string[];
  count: number;
  total: number;
}

export function lambda(a: TraceAccount): void {
  const { spans, tree: t, config: c, excessMs } = a;
  const notes = new Map<HopAccount, Map<EvidenceKind, Note>>();
  for (const i of a.path) {
    const excess = excessMs[i];
    if (!(excess > 0)) continue;
    const s = spans[i];
    const h = a.bookedOn[i]!;
    const sc = t.serverChild[i];
    const { lambda: w, reasons } = lambdaFor(s.kind === 'client' && sc >= 0 ? spans[sc] : s, c);
    h.weightedExcessMs += excess * w;
    if (s.kind === 'client') noteInferredCall(a, h, i);
    const isClient = s.kind === 'client' && !a.callerSide[i];
    if (excess > h.bestExcessMs) {
      h.bestExcessMs = excess;
      const shown = isClient && sc >= 0 ? spans[sc] : s;
      h.spanId = shown.spanId;
      h.operation = shown.name;
    }
    const kind: EvidenceKind = isClient
      ? sc >= 0
        ? 'client_server_gap'
        : 'unanswered_call'
      : a.callerSide[i]
        ? 'client_side_delay'
        : 'self_time';
    let byKind = notes.get(h);
    if (!byKind) notes.set(h, (byKind = new Map()));
    const prev = byKind.get(kind);
    if (!prev) byKind.set(kind, { i, excess, lambda: w, reasons, count: 1, total: excess });
    else {
      prev.count++;
      prev.total += excess;
      if (excess > prev.excess) Object.assign(prev, { i, excess, lambda: w, reasons });
    }
  }
  for (const [h, byKind] of notes) {
    for (const [kind, nt] of byKind) {
      const { i, excess, lambda: w, reasons } = nt;
      const s = spans[i];
      const self = t.self[i];
      const b = opAt(a, i);
      const base = b
        ? ` vs ${fmtMs(b.self.median)} usually (median of ${b.self.count} healthy; z=${a.z[i].toFixed(1)})`
        : ' (no baseline for this operation: counted at half weight)';
      const why = reasons.length ? `; ${reasons.join('; ')}` : '';
      const more =
        (nt.count > 1 ? `; the worst of ${nt.count} such spans, ${fmtMs(nt.total)} above baseline in all` : '') +
        (kind !== 'self_time' && inferredCall(a, i) ? '; call inferred from the tree (no span kinds)' : '');
      let summary: string;
      if (kind === 'client_server_gap' || kind === 'unanswered_call') {
        const callee =
          kind === 'client_server_gap' ? `${h.service}'s server span` : `a span from ${h.service} (none arrived)`;
        summary = `${s.service} → ${h.service}: ${fmtMs(self)} between the client span "${s.name}" and ${callee}${base}; network, TLS or queueing${why}${more}`;
      } else if (kind === 'client_side_delay') {
        const fanOut = a.slowCallers.get(hopKey(s.service, podOrServiceOfSpan(s)));
        summary = `${s.service} → ${spans[t.serverChild[i]].service}: ${fmtMs(self)} between the client span "${s.name}" and the server span${base}; ${s.service}'s calls to ${fanOut} services are all slow to leave it (CPU, client pool or its egress)${why}${more}`;
      } else {
        summary = `${s.service} "${s.name}" spent ${fmtMs(self)} in itself${base}; ${fmtMs(excess)} of it above baseline on the critical path${why}${more}`;
      }
      h.evidence.push({
        kind,
        summary,
        spanId: s.spanId,
        valueMs: round(self),
        ...(b ? { baselineMs: round(b.self.median) } : {}),
        excessMs: round(excess),
        lambda: w,
        ...(nt.count > 1 ? { spans: nt.count, totalExcessMs: round(nt.total) } : {}),
      });
    }
  }
}
