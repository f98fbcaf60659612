/**
 * A/B of inference backend × model version from spans: latency distributions on shared edges, P50/P99/TTFT, and
 * jitter hot zones (time buckets where P99/P50 jumps), aligned on one time grid for overlay.
 *
 * Only the inference servers' own server spans are counted (./inference-spans): not the gateway's and the agent's
 * client spans to them, nor whole agent runs, which would count one request two or three times and mix in their
 * callers' waits. The spans are those the trace source kept: each side says how many requests they stand for
 * (scaled by the sampling rates recorded on their traces) and whether that is a sample.
 */
import { isFailedSpan, ttftMsOfSpan, type CompareAnswer, type CompareSide, type Span } from '../../../contract';
import type { TimeRange } from '../domain/time-range';
import { settle } from '../sources/http';
import type { TraceSource } from '../sources/traces';
import { isBackendSpan, isInferenceServerSpan, outermostOf } from './inference-spans';
import { quantileOrNull, round } from './stats';

export type Selector = CompareSide['selector'];

interface CompareQuery {
  a: Selector;
  b: Selector;
  range: TimeRange;
  buckets: number;
}

function matches(s: Span, sel: Selector): boolean {
  if (sel.service && s.service !== sel.service) return false;
  // A service alone picks that service's requests; a backend or a model, the inference servers' own spans.
  if (!sel.backend && !sel.model) return s.kind === 'server';
  if (!isInferenceServerSpan(s)) return false;
  if (sel.backend && !isBackendSpan(s, sel.backend)) return false;
  if (sel.model) {
    const m = s.attributes['gen_ai.request.model'] ?? s.attributes['gen_ai.response.model'];
    if (m !== sel.model) return false;
  }
  return true;
}

const rateOf = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return n > 0 && n <= 1 ? n : undefined;
};

/** Head-sampling rate per trace, from the rate the chain's sampler records on a kept trace's root span. */
function headRates(spans: Span[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of spans) {
    const r = rateOf(s.attributes['hopscope.sampler.rate']);
    if (r !== undefined) m.set(s.traceId, r);
  }
  return m;
}

/** How many requests a kept span stands for: 1/r of its trace's head rate × 1/p of the Collector's; failed ones 1/p. */
function weightOf(s: Span, rates: Map<string, number>): number {
  const p = rateOf(s.attributes['hopscope.sampling.probability']) ?? 1;
  const r = isFailedSpan(s) ? 1 : (rates.get(s.traceId) ?? 1);
  return 1 / (r * p);
}

interface SampleInfo {
  sampled: boolean;
  source: string;
  traces: number;
}

/** Log-spaced edges from 1 ms to 120 s: shared by both sides so the histograms overlay. */
const EDGES_MS = Array.from({ length: 41 }, (_, i) => round(10 ** (i / 8), 2));

function side(
  spans: Span[],
  sel: Selector,
  from: number,
  bucketMs: number,
  n: number,
  rates: Map<string, number>,
  info: SampleInfo
): CompareSide {
  // An engine's own request span inside the hop's server span is the same request: counted once.
  const chosen = outermostOf(spans.filter((s) => matches(s, sel)));
  let estimated = 0;
  let scaled = 0;
  for (const s of chosen) {
    const w = weightOf(s, rates);
    estimated += w;
    if (w !== 1) scaled++;
  }
  const what = sel.backend || sel.model ? "the inference servers' own server spans" : `${sel.service}'s server spans`;
  const exact = !info.sampled && scaled === 0;
  const note = info.sampled
    ? `${what} in a sample of ${info.traces} trace(s) from ${info.source}: distributions and percentiles of the sample`
    : scaled
      ? `${what} the ${info.source} kept; ${scaled} of ${chosen.length} were head-sampled, so they stand for ${round(estimated, 1)} requests (percentiles are of the kept spans)`
      : `${what} the ${info.source} holds for the range (none carried a sampling rate)`;
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
  const typical =
    quantileOrNull(
      ratios.filter((r): r is number => r !== null),
      0.5
    ) ?? 1;
  const hotZones = ratios.flatMap((r, i) =>
    r !== null && r >= Math.max(2, 1.5 * typical)
      ? [
          {
            startMs: from + i * bucketMs,
            endMs: from + (i + 1) * bucketMs,
            ratio: round(r),
            p50Ms: p50Series[i]!,
            p99Ms: p99Series[i]!,
          },
        ]
      : []
  );
  return {
    selector: sel,
    count: chosen.length,
    p50Ms: quantileOrNull(dur, 0.5),
    p99Ms: quantileOrNull(dur, 0.99),
    ttftP50Ms: quantileOrNull(ttft, 0.5),
    ttftP99Ms: quantileOrNull(ttft, 0.99),
    histogram,
    p50Series,
    p99Series,
    hotZones,
    origin: 'sampled-traces',
    exact,
    note,
    estimatedRequests: round(estimated, 2),
  };
}

export class CompareService {
  /** `sampled`: the source's window is a sample of the range's traces (Tempo's), not all of them (the embedded store). */
  constructor(
    private traces: TraceSource,
    private sampledWindows = false
  ) {}

  async compare(q: CompareQuery): Promise<CompareAnswer> {
    const { range, buckets: n } = q;
    const bucketMs = Math.ceil((range.to - range.from) / n);
    const got = await settle(this.traces.name, () => this.traces.spansInWindow(range.from, range.to));
    const spans = got.value ?? [];
    const rates = headRates(spans);
    const info: SampleInfo = {
      sampled: this.sampledWindows,
      source: this.traces.name,
      traces: new Set(spans.map((s) => s.traceId)).size,
    };
    return {
      ...range,
      bucketEdgesMs: EDGES_MS,
      bucketMs,
      times: Array.from({ length: n }, (_, i) => range.from + i * bucketMs),
      a: side(spans, q.a, range.from, bucketMs, n, rates, info),
      b: side(spans, q.b, range.from, bucketMs, n, rates, info),
      sources: [got.status],
    };
  }
}
