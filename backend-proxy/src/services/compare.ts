/**
 * A/B of inference backend × model version from spans: latency distributions on shared edges, P50/P99/TTFT, and
 * jitter hot zones (time buckets where P99/P50 jumps), aligned on one time grid for overlay.
 */
import { ttftMsOfSpan, type CompareAnswer, type CompareSide, type Span } from '../../../contract';
import type { TimeRange } from '../http/params';
import { settle } from '../sources/http';
import type { TraceSource } from '../sources/traces';
import { isBackendSpan } from './inference-spans';
import { quantileOrNull, round } from './stats';

export type Selector = CompareSide['selector'];

interface CompareQuery { a: Selector; b: Selector; range: TimeRange; buckets: number }

function matches(s: Span, sel: Selector): boolean {
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
const EDGES_MS = Array.from({ length: 41 }, (_, i) => round(10 ** (i / 8), 2));

function side(spans: Span[], sel: Selector, from: number, bucketMs: number, n: number): CompareSide {
  const chosen = spans.filter((s) => matches(s, sel));
  const dur = chosen.map((s) => s.endMs - s.startMs);
  const ttft = chosen.map(ttftMsOfSpan).filter((v): v is number => v !== undefined);
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

export class CompareService {
  constructor(private traces: TraceSource) {}

  async compare(q: CompareQuery): Promise<CompareAnswer> {
    const { range, buckets: n } = q;
    const bucketMs = Math.ceil((range.to - range.from) / n);
    const got = await settle(this.traces.name, () => this.traces.spansInWindow(range.from, range.to));
    const spans = got.value ?? [];
    return {
      ...range, bucketEdgesMs: EDGES_MS, bucketMs, times: Array.from({ length: n }, (_, i) => range.from + i * bucketMs),
      a: side(spans, q.a, range.from, bucketMs, n), b: side(spans, q.b, range.from, bucketMs, n), sources: [got.status],
    };
  }
}
