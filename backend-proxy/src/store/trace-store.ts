/**
 * The embedded trace store: spans from POST /v1/traces, grouped by trace, bounded by span count, approximate bytes
 * and age (oldest traces evicted first, evictions counted by reason). Search by service, duration, status, time.
 */
import type { Span, TraceDetail, TraceStatus, TraceSummary } from '../../../contract';
import { storeEvictions, storeSpans, storeTraces } from '../metrics';

interface Entry {
  spans: Span[];
  bytes: number;
  /** Wall-clock time of the first ingest (eviction order). */
  firstIngestMs: number;
  lastIngestMs: number;
  startMs: number;
  endMs: number;
  /** Cached summary; cleared when spans arrive. */
  summary?: TraceSummary;
}

export interface StoreLimits { maxSpans: number; maxBytes: number; maxAgeMs: number }

export interface TraceQuery {
  from?: number;
  to?: number;
  service?: string;
  minDurationMs?: number;
  maxDurationMs?: number;
  status?: TraceStatus;
  limit?: number;
}

const RANK: Record<TraceStatus, number> = { unset: 0, ok: 1, error: 2, timeout: 3 };

export function spanBytes(s: Span): number {
  let n = 160 + s.name.length + s.service.length;
  for (const [k, v] of Object.entries(s.attributes)) n += k.length + (typeof v === 'string' ? v.length : 8) + 16;
  return n; // resource records are shared per batch, so they are not counted per span
}

export function summarize(traceId: string, spans: Span[]): TraceSummary {
  const ids = new Set(spans.map((s) => s.spanId));
  let root: Span | undefined;
  let start = Infinity;
  let end = -Infinity;
  let status: TraceStatus = 'unset';
  const services = new Set<string>();
  for (const s of spans) {
    if (s.startMs < start) start = s.startMs;
    if (s.endMs > end) end = s.endMs;
    if (RANK[s.status] > RANK[status]) status = s.status;
    services.add(s.service);
    // Root: a span with no parent, else one whose parent never arrived (partial trace); earliest wins.
    const isRoot = !s.parentSpanId || !ids.has(s.parentSpanId);
    if (!isRoot) continue;
    if (!root) { root = s; continue; }
    const better = (!s.parentSpanId && !!root.parentSpanId) || (!!s.parentSpanId === !!root.parentSpanId && s.startMs < root.startMs);
    if (better) root = s;
  }
  const r = root ?? spans[0];
  return {
    traceId,
    rootService: r?.service ?? 'unknown_service',
    rootName: r?.name ?? '',
    startMs: Number.isFinite(start) ? start : 0,
    durationMs: Number.isFinite(end - start) ? Math.max(0, end - start) : 0,
    status,
    spanCount: spans.length,
    services: [...services].sort(),
  };
}

export class TraceStore {
  private traces = new Map<string, Entry>();
  private spanCount = 0;
  private byteCount = 0;
  readonly evicted = { count: 0, age: 0, capacity: 0 };

  constructor(private limits: StoreLimits, private now: () => number = Date.now) {}

  get size(): { traces: number; spans: number; bytes: number } {
    return { traces: this.traces.size, spans: this.spanCount, bytes: this.byteCount };
  }

  /** Adds spans (already normalised and enriched); a span id seen again in the same trace replaces the old one. */
  add(spans: Span[]): void {
    const now = this.now();
    for (const s of spans) {
      let e = this.traces.get(s.traceId);
      if (!e) {
        e = { spans: [], bytes: 0, firstIngestMs: now, lastIngestMs: now, startMs: s.startMs, endMs: s.endMs };
        this.traces.set(s.traceId, e);
      }
      const b = spanBytes(s);
      const dup = e.spans.findIndex((x) => x.spanId === s.spanId);
      if (dup >= 0) {
        const old = spanBytes(e.spans[dup]);
        e.spans[dup] = s;
        e.bytes += b - old;
        this.byteCount += b - old;
      } else {
        e.spans.push(s);
        e.bytes += b;
        this.byteCount += b;
        this.spanCount++;
      }
      e.lastIngestMs = now;
      e.summary = undefined;
      if (s.startMs < e.startMs) e.startMs = s.startMs;
      if (s.endMs > e.endMs) e.endMs = s.endMs;
    }
    this.evict();
  }

  /** Drops traces older than maxAge, then the oldest until under the span and byte bounds. */
  evict(): void {
    const cutoff = this.now() - this.limits.maxAgeMs;
    for (const [id, e] of this.traces) {
      // Map order is first-ingest order, so the first young trace ends the age sweep.
      if (e.lastIngestMs >= cutoff && e.firstIngestMs >= cutoff) break;
      if (e.lastIngestMs >= cutoff) continue;
      this.drop(id, e, 'age');
    }
    for (const [id, e] of this.traces) {
      if (this.spanCount <= this.limits.maxSpans && this.byteCount <= this.limits.maxBytes) break;
      this.drop(id, e, 'capacity');
    }
    storeSpans.set(this.spanCount);
    storeTraces.set(this.traces.size);
  }

  private drop(id: string, e: Entry, reason: 'age' | 'capacity'): void {
    this.traces.delete(id);
    this.spanCount -= e.spans.length;
    this.byteCount -= e.bytes;
    this.evicted.count += e.spans.length;
    this.evicted[reason] += e.spans.length;
    storeEvictions.inc({ reason }, e.spans.length);
  }

  get(traceId: string): TraceDetail | undefined {
    const e = this.traces.get(traceId.toLowerCase().padStart(32, '0'));
    return e ? { traceId: traceId.toLowerCase().padStart(32, '0'), spans: [...e.spans].sort((a, b) => a.startMs - b.startMs) } : undefined;
  }

  search(q: TraceQuery): TraceSummary[] {
    const out: TraceSummary[] = [];
    const limit = q.limit ?? 100;
    // Newest first: walk the insertion-ordered map backwards.
    const entries = [...this.traces.entries()];
    for (let i = entries.length - 1; i >= 0; i--) {
      const [id, e] = entries[i];
      if (q.from !== undefined && e.endMs < q.from) continue;
      if (q.to !== undefined && e.startMs > q.to) continue;
      if (q.minDurationMs !== undefined && e.endMs - e.startMs < q.minDurationMs) continue;
      if (q.service && !e.spans.some((s) => s.service === q.service)) continue;
      const sum = (e.summary ??= summarize(id, e.spans));
      if (q.minDurationMs !== undefined && sum.durationMs < q.minDurationMs) continue;
      if (q.maxDurationMs !== undefined && sum.durationMs > q.maxDurationMs) continue;
      if (q.status && sum.status !== q.status) continue;
      out.push({ ...sum });
      if (out.length >= limit) break;
    }
    return out.sort((a, b) => b.startMs - a.startMs);
  }

  /**
   * The RCA baseline: recent healthy traces that contain one of the given service+operation pairs, whole (so self
   * times can be computed). Healthy = no error/timeout span and not slower than twice the median of its root
   * operation (so the slow traces of an ongoing incident do not become their own baseline). Traces that ended before
   * `beforeMs` (the analysed trace's start) come first, newest first; later ones only fill up to `minTraces`.
   */
  baseline(keys: Array<{ service: string; name: string }>, maxTraces = 200, exceptTraceId?: string, beforeMs = Infinity, minTraces = 30, maxSpans = 50_000): Span[] {
    const want = new Set(keys.map((k) => `${k.service}\u0000${k.name}`));
    const earlier: Array<[string, Entry]> = [];
    const later: Array<[string, Entry]> = [];
    const entries = [...this.traces.entries()];
    for (let i = entries.length - 1; i >= 0 && earlier.length < maxTraces * 2; i--) {
      const [id, e] = entries[i];
      if (id === exceptTraceId) continue;
      let hit = false;
      let bad = false;
      for (const s of e.spans) {
        if (s.status === 'error' || s.status === 'timeout') { bad = true; break; }
        if (!hit && want.has(`${s.service}\u0000${s.name}`)) hit = true;
      }
      if (!hit || bad) continue;
      (e.endMs <= beforeMs ? earlier : later).push([id, e]);
    }
    const pool = earlier.length >= minTraces ? earlier : [...earlier, ...later.slice(0, minTraces - earlier.length)];
    // Typical duration per root operation, then drop the slow outliers.
    const byRoot = new Map<string, number[]>();
    const rootOf = new Map<string, string>();
    for (const [id, e] of pool) {
      const sum = (e.summary ??= summarize(id, e.spans));
      const k = `${sum.rootService}\u0000${sum.rootName}`;
      rootOf.set(id, k);
      const l = byRoot.get(k);
      if (l) l.push(sum.durationMs); else byRoot.set(k, [sum.durationMs]);
    }
    const median = new Map([...byRoot].map(([k, d]) => [k, d.sort((a, b) => a - b)[Math.floor(d.length / 2)]]));
    const out: Span[] = [];
    let n = 0;
    for (const [id, e] of pool) {
      // Bounded work for huge traces: enough healthy examples, not the whole store.
      if (n >= maxTraces || (n > 0 && out.length + e.spans.length > maxSpans)) break;
      if (e.endMs - e.startMs > 2 * (median.get(rootOf.get(id)!) ?? Infinity)) continue;
      out.push(...e.spans);
      n++;
    }
    return out;
  }

  /** Every span in [from, to] (for windows, services and compare), newest traces first, bounded. */
  spansInWindow(from: number, to: number, maxSpans = 200_000): Span[] {
    const out: Span[] = [];
    const entries = [...this.traces.values()];
    for (let i = entries.length - 1; i >= 0 && out.length < maxSpans; i--) {
      const e = entries[i];
      if (e.endMs < from || e.startMs > to) continue;
      for (const s of e.spans) if (s.endMs >= from && s.startMs <= to) out.push(s);
    }
    return out;
  }
}
