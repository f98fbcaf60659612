/**
 * Errors and timeouts: under the anchor, the origin of a failure is a failed span none of whose children
 * failed (a failed client span → its callee: the network side). The degradations found before the anchor (a model
 * fallback) are booked the same way, with their own weight. Each origin's window is joined with its pod's kernel
 * events by the kernel pass.
 */
import { isFailedSpan } from '../../../../contract';
import {
  type Degradation,
  type HopAccount,
  type TraceAccount,
  bookingHop,
  bookingSpan,
  inferredCall,
  noteInferredCall,
  opAt,
} from '../account';
import { fmtMs } from '../format';

export function origins(a: TraceAccount): void {
  const { spans, tree: t, inAnchor } = a;
  const n = spans.length;
  for (let i = 0; i < n; i++) {
    if (!inAnchor[i] || !isFailedSpan(spans[i])) continue;
    if (t.children[i].some((ch) => isFailedSpan(spans[ch]))) continue;
    const s = spans[i];
    const isClient = s.kind === 'client';
    const h = bookingHop(a, i);
    const b = opAt(a, i);
    const usual = b ? b.errorRate : 0;
    h.errorScore = Math.max(h.errorScore, s.status === 'timeout' ? 1 : Math.max(0, 1 - usual));
    if (h.bestExcessMs === -Infinity || !h.spanId) {
      const shown = bookingSpan(a, i);
      h.spanId = shown.spanId;
      h.operation = shown.name;
    }
    const msg = s.statusMessage ? `: ${s.statusMessage}` : '';
    const dur = fmtMs(s.endMs - s.startMs);
    const sc = t.serverChild[i];
    let summary: string;
    if (isClient && s.status === 'timeout') {
      summary =
        sc >= 0
          ? `${s.service}'s call "${s.name}" to ${h.service} timed out after ${dur}${msg}; ${h.service}'s span ran ${fmtMs(spans[sc].endMs - spans[sc].startMs)}`
          : `${s.service}'s call "${s.name}" to ${h.service} timed out after ${dur}${msg}; no span from ${h.service} arrived`;
    } else if (isClient) {
      summary = `${s.service}'s call "${s.name}" to ${h.service} failed after ${dur}${msg} (${sc >= 0 ? 'the server span did not fail: network side' : 'no server span'})`;
    } else {
      summary = `${s.service} "${s.name}" ${s.status === 'timeout' ? 'timed out' : 'failed'} after ${dur}${msg}; the first failure on its branch (its children did not fail)`;
    }
    if (usual > 0) summary += `; ${(usual * 100).toFixed(1)}% of healthy calls fail too`;
    if (isClient && inferredCall(a, i)) summary += '; call inferred from the tree (no span kinds)';
    h.evidence.push({ kind: s.status === 'timeout' ? 'timeout' : 'error', summary, spanId: s.spanId });
    if (isClient) noteInferredCall(a, h, i);
    a.origins.push({ h, index: i });
  }

  // Degraded answers (spans that did not fail but say they served a fallback), one sentence per hop with a count.
  const byHop = new Map<HopAccount, Degradation[]>();
  for (const d of a.degradations) {
    if (!inAnchor[d.index]) continue;
    const h = bookingHop(a, d.index);
    const l = byHop.get(h);
    if (l) l.push(d);
    else byHop.set(h, [d]);
    a.origins.push({ h, index: d.index });
  }
  for (const [h, list] of byHop) {
    const first = list[0];
    const shown = bookingSpan(a, first.index);
    h.spanId ??= shown.spanId;
    h.operation ??= shown.name;
    for (const d of list) h.errorScore = Math.max(h.errorScore, d.score);
    const more =
      list.length > 1
        ? { summary: `; the first of ${list.length} such spans in this trace`, spans: list.length }
        : undefined;
    for (const e of first.evidence)
      h.evidence.push(more ? { ...e, summary: e.summary + more.summary, spans: more.spans } : e);
  }
}
