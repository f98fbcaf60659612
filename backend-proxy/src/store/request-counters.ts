/**
 * Counters kept at ingest for every span the embedded store receives, so service and pod rates, errors and latency
 * percentiles come from counts, not from the traces the store still holds (it drops traces when full; samplers drop
 * them before they arrive). Per (service, pod, request-or-not) and second of the span's end time: spans received,
 * failed spans, and the requests they stand for; per 10 s, a weighted log histogram of durations (2% relative
 * accuracy). A window's edge seconds (and edge 10 s for the histogram) are pro-rated by their overlap.
 *
 * A sampled stream is scaled by what the samplers recorded, never guessed:
 * - `hopscope.sampler.rate` r on a trace's root span (the chain's head sampler writes it when it keeps a trace):
 *   every healthy span of that trace counts 1/r. The root usually arrives last, so earlier spans of the trace are
 *   counted at 1 and corrected when it comes.
 * - `hopscope.sampling.probability` p on a span (the Collector's tail sampling, on traces kept by its probabilistic
 *   share): that span counts 1/p more.
 * - Failed spans count 1 (times 1/p): the chain's sampler exports every failed span whatever it decided
 *   (KeepErrorsSpanProcessor), and the Collector keeps every error trace.
 * - A root that carries no rate while its service's roots usually do is a trace the head sampler dropped and kept
 *   only for its errors: its healthy spans count 0 (the kept traces' 1/r already stands for them).
 * Unbiased for the chain's samplers; a sampler that records nothing makes these counts undercount, which the
 * answers say.
 */
import { isFailedSpan, nodeOfSpan, podOrServiceOfSpan, type Span } from '../../../contract';
import type { TraceStoreObserver } from './trace-store';

export const CELL_MS = 1000;
export const HIST_CELL_MS = 10_000;
const ALPHA = 0.02;
const GAMMA = (1 + ALPHA) / (1 - ALPHA);
const LOG_GAMMA = Math.log(GAMMA);
const MIN_MS = 0.001;
/** Spans of a trace remembered until its head weight is known (the root span arrives last). */
const PENDING_TTL_MS = 120_000;
const MAX_PENDING_TRACES = 50_000;
const MAX_PENDING_PER_TRACE = 1024;
/** Traces whose server spans are remembered to tell a nested server span (an engine's) from a new request. */
const MAX_SERVER_TRACES = 50_000;
/** A service's roots "usually record the rate" when one did within this long. */
const SAMPLER_MEMORY_MS = 300_000;
const FUTURE_SLACK_MS = 300_000;

interface Cell {
  spans: number;
  errorSpans: number;
  /** Requests these spans stand for (Σ weights) and the failed ones among them. */
  weighted: number;
  weightedErrors: number;
  /** Spans counted with a weight other than 1 (scaled up, or 0 for traces kept only for their errors). */
  scaledSpans: number;
  scaledErrors: number;
}

/** Log bucket → Σ weights; durations below MIN_MS in `zero`. */
interface Hist {
  hist: Map<number, number>;
  zero: number;
}

interface Series {
  service: string;
  pod: string;
  node?: string;
  request: boolean;
  cells: Map<number, Cell>;
  hists: Map<number, Hist>;
}

interface PendingEntry {
  series: Series;
  cell: number;
  bucket: number;
  base: number;
}
interface TraceState {
  created: number;
  head?: number;
  entries: PendingEntry[];
}

/** One series' figures over a window (cells at the window's edges pro-rated by their overlap). */
export interface CountsRow {
  service: string;
  pod: string;
  node?: string;
  /** Server/consumer spans: the service's requests. */
  request: boolean;
  spans: number;
  errorSpans: number;
  requests: number;
  errors: number;
  scaledSpans: number;
  scaledErrors: number;
  hist: Map<number, number>;
  zero: number;
}

const bucketOf = (ms: number): number => (ms < MIN_MS ? -Infinity : Math.ceil(Math.log(ms / MIN_MS) / LOG_GAMMA));
const bucketValue = (i: number): number => (2 * MIN_MS * GAMMA ** i) / (GAMMA + 1);

function rate(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() ? Number(v) : NaN;
  return n > 0 && n <= 1 ? n : undefined;
}

/** The q-quantile (0..1) of a weighted log histogram, in ms; null when it holds no weight. */
export function histQuantile(hist: Map<number, number>, zero: number, q: number): number | null {
  let total = zero;
  for (const w of hist.values()) total += w;
  if (!(total > 0)) return null;
  const target = q * total;
  let cum = zero;
  if (cum >= target && zero > 0) return 0;
  const keys = [...hist.keys()].sort((a, b) => a - b);
  for (const k of keys) {
    cum += hist.get(k)!;
    if (cum >= target - 1e-9) return bucketValue(k);
  }
  return bucketValue(keys[keys.length - 1]);
}

export function mergeHist(into: Map<number, number>, from: Map<number, number>, f = 1): void {
  for (const [k, w] of from) into.set(k, (into.get(k) ?? 0) + w * f);
}

function histOf(series: Series, cellIdx: number): Hist {
  const k = Math.floor((cellIdx * CELL_MS) / HIST_CELL_MS);
  let h = series.hists.get(k);
  if (!h) series.hists.set(k, (h = { hist: new Map(), zero: 0 }));
  return h;
}

export class RequestCounters implements TraceStoreObserver {
  private series = new Map<string, Series>();
  private traces = new Map<string, TraceState>();
  /** Server spans seen per trace (see nestedServer). */
  private servers = new Map<string, Map<string, { parent?: string; service: string; counted: boolean }>>();
  /** Root services whose roots carried `hopscope.sampler.rate`, and when last. */
  private samplerRoots = new Map<string, number>();
  private lastSweep = 0;
  /** Spans not counted, by why: too old for the retention, from the far future, past the series bound. */
  readonly skipped = { old: 0, future: 0, overflow: 0 };

  constructor(private opts: { maxAgeMs: number; maxSeries?: number; now?: () => number }) {}

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The store's observer hook: every span received once (an exporter's retry of the same span is not counted again). */
  received(spans: readonly Span[]): void {
    const now = this.now;
    const oldest = now - this.opts.maxAgeMs;
    for (const s of spans) {
      if (s.endMs < oldest) {
        this.skipped.old++;
        continue;
      }
      if (s.endMs > now + FUTURE_SLACK_MS) {
        this.skipped.future++;
        continue;
      }
      this.count(s, now);
    }
    if (now - this.lastSweep > 1000) this.sweep(now);
  }

  /**
   * A server span nested in another server span of the same service (an inference engine's own request span, e.g.
   * vLLM's `llm_request`, inside the hop's HTTP server span) is the same request: whichever of the two arrives second
   * is not counted as a request again. Server spans are remembered per trace, the oldest traces forgotten first.
   */
  private nestedServer(s: Span): boolean {
    let m = this.servers.get(s.traceId);
    if (!m) {
      if (this.servers.size >= MAX_SERVER_TRACES) this.servers.delete(this.servers.keys().next().value!);
      m = new Map();
      this.servers.set(s.traceId, m);
    }
    const parent = s.parentSpanId ? m.get(s.parentSpanId) : undefined;
    let nested = parent !== undefined && parent.service === s.service && parent.counted;
    if (!nested)
      for (const x of m.values())
        if (x.parent === s.spanId && x.service === s.service && x.counted) {
          nested = true;
          break;
        }
    if (m.size < MAX_PENDING_PER_TRACE)
      m.set(s.spanId, { parent: s.parentSpanId, service: s.service, counted: !nested });
    return nested;
  }

  private seriesOf(s: Span): Series | undefined {
    const pod = podOrServiceOfSpan(s);
    const request = (s.kind === 'server' || s.kind === 'consumer') && !this.nestedServer(s);
    const key = `${s.service}\u0000${pod}\u0000${request ? 1 : 0}`;
    let x = this.series.get(key);
    if (!x) {
      if (this.series.size >= (this.opts.maxSeries ?? 10_000)) return undefined;
      x = { service: s.service, pod, request, cells: new Map(), hists: new Map() };
      this.series.set(key, x);
    }
    if (!x.node) {
      const node = nodeOfSpan(s);
      if (node) x.node = node;
    }
    return x;
  }

  private count(s: Span, now: number): void {
    const series = this.seriesOf(s);
    if (!series) {
      this.skipped.overflow++;
      return;
    }
    const failed = isFailedSpan(s);
    const p = rate(s.attributes['hopscope.sampling.probability'] ?? s.resource['hopscope.sampling.probability']);
    const base = p ? 1 / p : 1;
    const r = rate(s.attributes['hopscope.sampler.rate']);
    let t = this.traces.get(s.traceId);
    if (r !== undefined) {
      this.samplerRoots.set(s.service, now);
      t = this.settle(s.traceId, t, 1 / r, now);
    } else if (
      !s.parentSpanId &&
      t?.head === undefined &&
      (this.samplerRoots.get(s.service) ?? -Infinity) > now - SAMPLER_MEMORY_MS
    ) {
      // The sampler's root without its rate: dropped by the head sampler, exported only for its errors.
      t = this.settle(s.traceId, t, 0, now);
    }
    const head = failed ? 1 : t?.head;
    const w = base * (head ?? 1);
    const cellIdx = Math.floor(s.endMs / CELL_MS);
    let cell = series.cells.get(cellIdx);
    if (!cell) {
      cell = { spans: 0, errorSpans: 0, weighted: 0, weightedErrors: 0, scaledSpans: 0, scaledErrors: 0 };
      series.cells.set(cellIdx, cell);
    }
    const h = histOf(series, cellIdx);
    const d = Math.max(0, s.endMs - s.startMs);
    const bucket = bucketOf(d);
    cell.spans++;
    cell.weighted += w;
    if (w !== 1) cell.scaledSpans++;
    if (failed) {
      cell.errorSpans++;
      cell.weightedErrors += w;
      if (w !== 1) cell.scaledErrors++;
    }
    if (bucket === -Infinity) h.zero += w;
    else h.hist.set(bucket, (h.hist.get(bucket) ?? 0) + w);
    // Healthy spans of a trace whose head weight is not known yet: remembered, to be corrected when the root comes.
    if (!failed && head === undefined) {
      if (!t) {
        t = { created: now, entries: [] };
        this.traces.set(s.traceId, t);
      }
      if (t.entries.length < MAX_PENDING_PER_TRACE) t.entries.push({ series, cell: cellIdx, bucket, base });
    }
  }

  /** The trace's head weight is now known: spans already counted at 1 are corrected to it. */
  private settle(traceId: string, t: TraceState | undefined, head: number, now: number): TraceState {
    if (!t) {
      t = { created: now, entries: [] };
      this.traces.set(traceId, t);
    }
    if (t.head !== undefined) return t;
    t.head = head;
    for (const e of t.entries) {
      const cell = e.series.cells.get(e.cell);
      if (!cell) continue;
      const delta = e.base * (head - 1);
      cell.weighted += delta;
      if (e.base === 1 && head !== 1) cell.scaledSpans++;
      const h = histOf(e.series, e.cell);
      if (e.bucket === -Infinity) h.zero += delta;
      else h.hist.set(e.bucket, (h.hist.get(e.bucket) ?? 0) + delta);
    }
    t.entries = [];
    return t;
  }

  /** Forgets cells past the retention and traces whose root had its chance to arrive. */
  sweep(now = this.now): void {
    this.lastSweep = now;
    const oldestCell = Math.floor((now - this.opts.maxAgeMs) / CELL_MS);
    for (const [k, x] of this.series) {
      for (const c of x.cells.keys()) if (c < oldestCell) x.cells.delete(c);
      for (const c of x.hists.keys()) if ((c + 1) * HIST_CELL_MS <= oldestCell * CELL_MS) x.hists.delete(c);
      if (!x.cells.size) this.series.delete(k);
    }
    for (const [id, t] of this.traces) {
      // Insertion order is creation order: the first young one ends the sweep (unless the map is over its bound).
      if (t.created > now - PENDING_TTL_MS && this.traces.size <= MAX_PENDING_TRACES) break;
      this.traces.delete(id);
    }
    for (const [svc, at] of this.samplerRoots) if (at < now - SAMPLER_MEMORY_MS) this.samplerRoots.delete(svc);
  }

  /** Every series' figures over [from, to] (optionally of one service). */
  window(from: number, to: number, service?: string): CountsRow[] {
    const out: CountsRow[] = [];
    const first = Math.floor(from / CELL_MS);
    const last = Math.floor((to - 1) / CELL_MS);
    for (const x of this.series.values()) {
      if (service !== undefined && x.service !== service) continue;
      const row: CountsRow = {
        service: x.service,
        pod: x.pod,
        ...(x.node ? { node: x.node } : {}),
        request: x.request,
        spans: 0,
        errorSpans: 0,
        requests: 0,
        errors: 0,
        scaledSpans: 0,
        scaledErrors: 0,
        hist: new Map(),
        zero: 0,
      };
      let any = false;
      const overlap = (start: number, width: number): number =>
        (Math.min(to, start + width) - Math.max(from, start)) / width;
      const visit = (idx: number, cell: Cell): void => {
        const f = overlap(idx * CELL_MS, CELL_MS);
        if (f <= 0) return;
        any = true;
        row.spans += cell.spans * f;
        row.errorSpans += cell.errorSpans * f;
        row.requests += cell.weighted * f;
        row.errors += cell.weightedErrors * f;
        row.scaledSpans += cell.scaledSpans * f;
        row.scaledErrors += cell.scaledErrors * f;
      };
      // Few cells per series relative to a long window: walk whichever is smaller.
      if (x.cells.size < last - first + 1) {
        for (const [idx, cell] of x.cells) if (idx >= first && idx <= last) visit(idx, cell);
      } else {
        for (let idx = first; idx <= last; idx++) {
          const cell = x.cells.get(idx);
          if (cell) visit(idx, cell);
        }
      }
      if (!any) continue;
      for (const [idx, h] of x.hists) {
        const f = overlap(idx * HIST_CELL_MS, HIST_CELL_MS);
        if (f <= 0) continue;
        row.zero += h.zero * f;
        mergeHist(row.hist, h.hist, f);
      }
      out.push(row);
    }
    return out;
  }

  /** How far back the counters reach (their retention), for answers that must say a range starts before it. */
  get retentionMs(): number {
    return this.opts.maxAgeMs;
  }

  get size(): { series: number; pendingTraces: number } {
    return { series: this.series.size, pendingTraces: this.traces.size };
  }
}
