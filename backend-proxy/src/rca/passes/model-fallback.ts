/**
 * Model fallback: a request answered by another model than the one asked for (`hopscope.fallback.*`, or
 * `gen_ai.request.model` ≠ `gen_ai.response.model`) is a degraded request, not a healthy one; so is a span reporting
 * a GPU out-of-memory (`hopscope.gpu.oom`). Every span the answer passed through shows the served model (the gateway
 * copies it): the origin is the span showing it none of whose descendants does — the LLM server span, or a client span
 * whose server never reported (booked on its callee). Runs before the anchor, which frames degradations like failures;
 * the origins pass books them, and the kernel pass joins that pod's events (GPU allocation failures) in their window.
 */
import { gpuOomOfSpan, modelFallbackOfSpan, type Evidence } from '../../../../contract';
import type { TraceAccount } from '../account';

/** What a degraded answer weighs at its origin: just under a failure, so a real error or timeout still ranks above it. */
const FALLBACK_SCORE = 0.8;

export function modelFallback(a: TraceAccount): void {
  const { spans, tree: t } = a;
  const n = spans.length;
  let shown: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const at = spans[i].attributes;
    // Cheap test first: most spans carry none of these attributes.
    if (
      at['gen_ai.response.model'] === undefined &&
      at['hopscope.fallback.model'] === undefined &&
      at['hopscope.gpu.oom'] === undefined &&
      at['hopscope.fallback.reason'] === undefined
    )
      continue;
    if (modelFallbackOfSpan(spans[i]) || gpuOomOfSpan(spans[i])) (shown ??= new Uint8Array(n))[i] = 1;
  }
  if (!shown) return;
  // below[i] = 1: some descendant shows it too, so span i only relays the answer.
  const below = new Uint8Array(n);
  for (let q = t.order.length - 1; q >= 0; q--) {
    const i = t.order[q];
    const p = t.parent[i];
    if (p >= 0 && (shown[i] || below[i])) below[p] = 1;
  }
  for (let i = 0; i < n; i++) {
    if (!shown[i] || below[i]) continue;
    const s = spans[i];
    const fb = modelFallbackOfSpan(s);
    const oom = gpuOomOfSpan(s);
    const evidence: Evidence[] = [];
    if (fb) {
      const why = oom || fb.reason === 'gpu_oom' ? ' after a GPU out-of-memory' : fb.reason ? ` (${fb.reason})` : '';
      const source = fb.explicit
        ? 'span attributes hopscope.fallback.*'
        : 'gen_ai.request.model ≠ gen_ai.response.model';
      evidence.push({
        kind: 'model_fallback',
        summary: `${s.service} "${s.name}" answered with ${fb.served} instead of ${fb.requested}${why} (${source}): a degraded answer, not a healthy one`,
        spanId: s.spanId,
        requestedModel: fb.requested,
        servedModel: fb.served,
        ...(fb.reason ? { reason: fb.reason } : {}),
      });
    } else {
      evidence.push({
        kind: 'gpu_oom',
        summary: `${s.service} "${s.name}" hit a GPU out-of-memory (span attribute hopscope.gpu.oom)`,
        spanId: s.spanId,
      });
    }
    a.degraded[i] = 1;
    a.degradations.push({
      index: i,
      score: FALLBACK_SCORE,
      what: fb ? 'fell back to another model' : 'hit a GPU out-of-memory',
      evidence,
    });
  }
}
