/**
 * GET /api/compare?a=<selector>&b=<selector>&from&to[&buckets] — A/B of inference backend × model version from spans:
 * latency distributions on shared edges, P50/P99/TTFT, and jitter hot zones (time buckets where P99/P50 jumps),
 * aligned on one time grid for overlay. Selector: `backend:vllm,model:llama-3-8b` (`=` works too).
 */
import { Router } from 'express';
import { InferenceBackend, type CompareAnswer, type CompareSide, type Span } from '../../../contract';
import type { ProxyConfig } from '../config';
import { badRequest } from '../http/errors';
import { NAME_RE, numberParam, stringParam, timeRange } from '../http/params';
import { settle } from '../sources/http';
import type { Sources } from '../sources';
import { isBackendSpan, spanTtftMs } from './golden';
import { quantileOrNull, round } from './stats';

export type Selector = CompareSide['selector'];

export function parseSelector(raw: string | undefined, name: string): Selector {
  if (!raw) throw badRequest(`${name}: a selector is required, e.g. ${name}=backend:vllm,model:llama-3-8b`);
  const sel: Selector = {};
  for (const part of raw.split(',')) {
    const m = /^\s*(backend|model|service)\s*[:=]\s*(.+?)\s*$/.exec(part);
    if (!m) throw badRequest(`${name}: "${part}" is not backend:<vllm|tgi>, model:<name> or service:<name>`);
    if (!NAME_RE.test(m[2])) throw badRequest(`${name}: "${m[2].slice(0, 60)}" has characters outside [A-Za-z0-9_.:-/]`);
    if (m[1] === 'backend') {
      const b = InferenceBackend.safeParse(m[2]);
      if (!b.success) throw badRequest(`${name}: backend "${m[2]}" is not one of ${InferenceBackend.options.join('|')}`);
      sel.backend = b.data;
    } else if (m[1] === 'model') sel.model = m[2];
    else sel.service = m[2];
  }
  return sel;
}

export function matches(s: Span, sel: Selector): boolean {
  if (sel.service && s.service !== sel.service) return false;
  if (sel.backend && !isBackendSpan(s, sel.backend)) return false;
  if (sel.model) {
    const m = s.attributes['gen_ai.request.model'] ?? s.attributes['gen_ai.response.model'];
    if (m !== sel.model) return false;
  }
  // The LLM request itself: a server span, or a span that names a model.
  return s.kind === 'server' || s.attributes['gen_ai.request.model'] !== undefined;
}

/** Log-spaced edges from 1 ms to 120 s: shared by both sides so the histograms overlay. */
export const EDGES_MS = Array.from({ length: 41 }, (_, i) => round(10 ** (i / 8), 2));

export function side(spans: Span[], sel: Selector, from: number, bucketMs: number, n: number): CompareSide {
  const chosen = spans.filter((s) => matches(s, sel));
  const dur = chosen.map((s) => s.endMs - s.startMs);
  const ttft = chosen.map(spanTtftMs).filter((v): v is number => v !== undefined);
  const histogram = new Array(EDGES_MS.length + 1).fill(0);
  for (const d of dur) {
    let i = EDGES_MS.findIndex((e) => d < e);
    if (i < 0) i = EDGES_MS.length;
    histogram[i]++;
  }
  const perBucket: number[][] = Array.from({ length: n }, () => []);
  for (const s of chosen) {
    const i = Math.floor((s.startMs - from) / bucketMs);
    if (i >= 0 && i < n) perBucket[i].push(s.endMs - s.startMs);
  }
  const p50Series = perBucket.map((b) => quantileOrNull(b, 0.5));
  const p99Series = perBucket.map((b) => quantileOrNull(b, 0.99));
  // Hot zone: P99/P50 in a bucket (≥ 5 samples) at least 2× and 1.5× the side's typical ratio.
  const ratios = perBucket.map((b, i) => (b.length >= 5 && p50Series[i]! > 0 ? p99Series[i]! / p50Series[i]! : null));
  const typical = quantileOrNull(ratios.filter((r): r is number => r !== null), 0.5) ?? 1;
  const hotZones = ratios.flatMap((r, i) => (r !== null && r >= Math.max(2, 1.5 * typical)
    ? [{ startMs: from + i * bucketMs, endMs: from + (i + 1) * bucketMs, ratio: round(r), p50Ms: p50Series[i]!, p99Ms: p99Series[i]! }] : []));
  return {
    selector: sel, count: chosen.length,
    p50Ms: quantileOrNull(dur, 0.5), p99Ms: quantileOrNull(dur, 0.99),
    ttftP50Ms: quantileOrNull(ttft, 0.5), ttftP99Ms: quantileOrNull(ttft, 0.99),
    histogram, p50Series, p99Series, hotZones,
  };
}

export function compareRoutes(_config: ProxyConfig, sources: Sources): Router {
  const r = Router();
  r.get('/compare', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const a = parseSelector(stringParam(q, 'a'), 'a');
    const b = parseSelector(stringParam(q, 'b'), 'b');
    const range = timeRange(q);
    const n = numberParam(q, 'buckets', 1, 500) ?? 30;
    const bucketMs = Math.ceil((range.to - range.from) / n);
    const got = await settle(sources.traces.name, () => sources.traces.spansInWindow(range.from, range.to));
    const spans = got.value ?? [];
    const answer: CompareAnswer = {
      ...range, bucketEdgesMs: EDGES_MS, bucketMs, times: Array.from({ length: n }, (_, i) => range.from + i * bucketMs),
      a: side(spans, a, range.from, bucketMs, n), b: side(spans, b, range.from, bucketMs, n), sources: [got.status],
    };
    res.json(answer);
  });
  return r;
}
