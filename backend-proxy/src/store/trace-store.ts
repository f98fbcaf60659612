/**
 * The embedded trace store: spans from POST /v1/traces, grouped by trace, bounded by span count, approximate bytes
 * and age (oldest traces evicted first, evictions counted by reason). Search by service, duration, status, time.
 *
 * The RCA baseline is kept cheap to ask for: each trace knows its error count and its service+operation pairs
 * (maintained on ingest), and a healthy trace's per-operation samples (tree-derived self time, duration, gap) are
 * computed once, shortly after its spans arrive, by an idle-time warm-up (or on demand if a click comes first), so a
 * root-cause click merges cached samples instead of rebuilding every baseline trace's tree.
 */
import { isFailedSpan, type Span, type TraceDetail, type TraceStatus, type TraceSummary } from '../../../contract';
import { storeEvictions, storeSpans, storeTraces } from '../metrics';
import { type Baseline, statsFromSamples, type TraceSamples, traceSamples } from '../rca/baseline';

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
  /** spanId → index in `spans` (a re-sent span replaces the old one without a scan). */
  index: Map<string, number>;
  /** Spans with status error/timeout: a trace with any is never baseline material. */
  errors: number;
  /** `service\0name` → span count: which operations the trace contains. */
  ops: Map<string, number>;
  /** Cached per-operation baseline samples of the whole trace; cleared when spans arrive. */
  samples?: TraceSamples;
  /** Span count when `samples` was last computed by the warm-up (0: never). */
  warmedSpans: number;
  /**
   * The resource record last counted in `bytes`. Spans of one request share their resource's record, and it lives as
   * long as any of them: it is counted once for each trace holding it (spans come grouped by resource).
   */
  resource?: object;
}

interface StoreLimits {
  maxSpans: number;
  maxBytes: number;
  maxAgeMs: number;
}

export interface TraceQuery {
  from?: number;
  to?: number;
  service?: string;
  minDurationMs?: number;
  maxDurationMs?: number;
  status?: TraceStatus;
  limit?: number;
  /** `recent` (default): newest first. `duration`: the slowest matching traces of the range, slowest first. */
  sort?: 'recent' | 'duration';
}

/** What follows the store from outside (secondary indexes such as run-index.ts): every span added, every trace dropped. */
export interface TraceStoreObserver {
  added?(spans: readonly Span[]): void;
  /** The spans of an `add` not received before (a span id re-sent in the same trace, e.g. an exporter's retry, is left out). */
  received?(spans: readonly Span[]): void;
  dropped?(traceId: string): void;
}

const RANK: Record<TraceStatus, number> = { unset: 0, ok: 1, error: 2, timeout: 3 };

const pairKey = (s: Span): string => `${s.service}\u0000${s.name}`;

/**
 * Approximate heap bytes, as measured on Node 20: a normalised span with its ids and index entries (~400), a trace's
 * entry with its maps (~800), and per attribute its key, its value and the record slot.
 */
const SPAN_BYTES = 400;
const TRACE_BYTES = 800;

function attributeBytes(attrs: Record<string, unknown>): number {
  let n = 0;
  for (const k in attrs) {
    const v = attrs[k];
    n += k.length + (typeof v === 'string' ? v.length : 8) + 16;
  }
  return n;
}

function spanBytes(s: Span): number {
  return SPAN_BYTES + s.name.length + s.service.length + attributeBytes(s.attributes);
}

function summarize(traceId: string, spans: Span[]): TraceSummary {
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
    if (!root) {
      root = s;
      continue;
    }
    const better =
      (!s.parentSpanId && !!root.parentSpanId) ||
      (!!s.parentSpanId === !!root.parentSpanId && s.startMs < root.startMs);
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
  /** Traces whose baseline samples are stale (spans arrived since), for the warm-up. */
  private dirty = new Set<string>();
  private warmScheduled = false;
  private warmTimer?: NodeJS.Timeout;
  /** Counts samples computed (warm-up and on demand): for tests and the bench. */
  readonly sampleBuilds = { warm: 0, onDemand: 0 };
  private observers: TraceStoreObserver[] = [];

  /**
   * `warm`: compute baseline samples in idle time after ingest (`false` in tests that want on-demand only).
   * A trace is warmed right away the first time and whenever it has doubled since its last warm-up (so a trace
   * arriving in many batches costs O(spans) overall); otherwise once it has been quiet for `quietMs`.
   */
  constructor(
    private limits: StoreLimits,
    private now: () => number = Date.now,
    private warm: { enabled: boolean; sliceMs: number; quietMs: number } = { enabled: true, sliceMs: 8, quietMs: 250 }
  ) {}

  observe(o: TraceStoreObserver): void {
    this.observers.push(o);
  }

  get size(): { traces: number; spans: number; bytes: number } {
    return { traces: this.traces.size, spans: this.spanCount, bytes: this.byteCount };
  }

  /** Adds spans (already normalised and enriched); a span id seen again in the same trace replaces the old one. */
  add(spans: Span[]): void {
    const now = this.now();
    const fresh: Span[] | undefined = this.observers.some((o) => o.received) ? [] : undefined;
    let resource: object | undefined;
    let resourceBytes = 0;
    for (const s of spans) {
      let e = this.traces.get(s.traceId);
      if (!e) {
        e = {
          spans: [],
          bytes: TRACE_BYTES,
          firstIngestMs: now,
          lastIngestMs: now,
          startMs: s.startMs,
          endMs: s.endMs,
          index: new Map(),
          errors: 0,
          ops: new Map(),
          warmedSpans: 0,
        };
        this.byteCount += TRACE_BYTES;
        this.traces.set(s.traceId, e);
      }
      if (s.resource !== e.resource) {
        if (s.resource !== resource) {
          resource = s.resource;
          resourceBytes = attributeBytes(s.resource) + 64;
        }
        e.resource = s.resource;
        e.bytes += resourceBytes;
        this.byteCount += resourceBytes;
      }
      const b = spanBytes(s);
      const dup = e.index.get(s.spanId);
      if (dup !== undefined) {
        const prev = e.spans[dup];
        const old = spanBytes(prev);
        if (isFailedSpan(prev)) e.errors--;
        const pk = pairKey(prev);
        const left = (e.ops.get(pk) ?? 1) - 1;
        if (left > 0) e.ops.set(pk, left);
        else e.ops.delete(pk);
        e.spans[dup] = s;
        e.bytes += b - old;
        this.byteCount += b - old;
      } else {
        fresh?.push(s);
        e.index.set(s.spanId, e.spans.length);
        e.spans.push(s);
        e.bytes += b;
        this.byteCount += b;
        this.spanCount++;
      }
      if (isFailedSpan(s)) e.errors++;
      const k = pairKey(s);
      e.ops.set(k, (e.ops.get(k) ?? 0) + 1);
      e.lastIngestMs = now;
      e.summary = undefined;
      e.samples = undefined;
      this.dirty.add(s.traceId);
      if (s.startMs < e.startMs) e.startMs = s.startMs;
      if (s.endMs > e.endMs) e.endMs = s.endMs;
    }
    for (const o of this.observers) {
      o.added?.(spans);
      if (fresh) o.received?.(fresh);
    }
    this.evict();
    this.scheduleWarm();
  }

  private scheduleWarm(delayMs = 0): void {
    if (!this.warm.enabled || !this.dirty.size) return;
    if (delayMs > 0) {
      if (this.warmTimer || this.warmScheduled) return;
      this.warmTimer = setTimeout(() => {
        this.warmTimer = undefined;
        this.scheduleWarm();
      }, delayMs);
      this.warmTimer.unref();
      return;
    }
    if (this.warmScheduled) return;
    this.warmScheduled = true;
    setImmediate(() => {
      this.warmScheduled = false;
      this.warmUp();
    }).unref();
  }

  /**
   * Computes baseline samples of dirty healthy traces for at most `sliceMs`, then yields (the rest continues on the
   * next turn of the event loop, so ingest and requests are never held up for long).
   */
  warmUp(sliceMs = this.warm.sliceMs): void {
    const t0 = performance.now();
    const quietBefore = this.now() - this.warm.quietMs;
    let deferred = false;
    for (const id of this.dirty) {
      if (performance.now() - t0 > sliceMs) {
        this.scheduleWarm();
        return;
      }
      const e = this.traces.get(id);
      if (!e || e.errors > 0) {
        this.dirty.delete(id);
        continue;
      }
      if (e.samples) {
        this.dirty.delete(id);
        continue;
      }
      if (e.warmedSpans && e.spans.length < 2 * e.warmedSpans && e.lastIngestMs > quietBefore) {
        deferred = true;
        continue;
      }
      e.samples = traceSamples(e.spans);
      e.summary ??= summarize(id, e.spans);
      e.warmedSpans = e.spans.length;
      this.sampleBuilds.warm++;
      this.dirty.delete(id);
    }
    if (deferred) this.scheduleWarm(this.warm.quietMs);
  }

  /** Whether every healthy trace has its baseline samples (tests, bench). */
  get warmedUp(): boolean {
    for (const id of this.dirty) {
      const e = this.traces.get(id);
      if (e && e.errors === 0 && !e.samples) return false;
    }
    return true;
  }

  /** Stops the warm-up timer (the proxy's shutdown). */
  close(): void {
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.warmTimer = undefined;
    this.warm.enabled = false;
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
    this.dirty.delete(id);
    this.spanCount -= e.spans.length;
    this.byteCount -= e.bytes;
    this.evicted.count += e.spans.length;
    this.evicted[reason] += e.spans.length;
    storeEvictions.inc({ reason }, e.spans.length);
    for (const o of this.observers) o.dropped?.(id);
  }

  get(traceId: string): TraceDetail | undefined {
    const e = this.traces.get(traceId.toLowerCase().padStart(32, '0'));
    return e
      ? { traceId: traceId.toLowerCase().padStart(32, '0'), spans: [...e.spans].sort((a, b) => a.startMs - b.startMs) }
      : undefined;
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
      // Slowest first needs every match of the range; newest first stops at the limit.
      if (out.length >= limit && q.sort !== 'duration') break;
    }
    if (q.sort === 'duration')
      return out.sort((a, b) => b.durationMs - a.durationMs || b.startMs - a.startMs).slice(0, limit);
    return out.sort((a, b) => b.startMs - a.startMs);
  }

  /**
   * The RCA baseline: recent healthy traces that contain one of the given service+operation pairs, whole (so self
   * times can be computed). Healthy = no error/timeout span and not slower than twice the median of its root
   * operation (so the slow traces of an ongoing incident do not become their own baseline). Traces that ended before
   * `beforeMs` (the analysed trace's start) come first, newest first; later ones only fill up to `minTraces`.
   */
  baseline(
    keys: Array<{ service: string; name: string }>,
    maxTraces = 200,
    exceptTraceId?: string,
    beforeMs = Infinity,
    minTraces = 30,
    maxSpans = 50_000
  ): Span[] {
    const out: Span[] = [];
    for (const [, e] of this.selectBaseline(keys, maxTraces, exceptTraceId, beforeMs, minTraces, maxSpans))
      out.push(...e.spans);
    return out;
  }

  /**
   * `baselineStats(baseline(...))` without rebuilding the traces' trees: the same traces, the same statistics, merged
   * from each trace's cached samples (computed now for the ones the warm-up has not reached yet). Undefined when no
   * trace qualifies.
   */
  baselineStats(
    keys: Array<{ service: string; name: string }>,
    maxTraces = 200,
    exceptTraceId?: string,
    beforeMs = Infinity,
    minTraces = 30,
    maxSpans = 50_000
  ): Baseline | undefined {
    const picked = this.selectBaseline(keys, maxTraces, exceptTraceId, beforeMs, minTraces, maxSpans);
    if (!picked.length) return undefined;
    return statsFromSamples(
      picked.map(([id, e]) => {
        if (!e.samples) {
          e.samples = traceSamples(e.spans);
          e.warmedSpans = e.spans.length;
          this.sampleBuilds.onDemand++;
          this.dirty.delete(id);
        }
        return e.samples;
      })
    );
  }

  /**
   * `baselineStats` of these traces, failed ones included (a load-test run's per-operation statistics), merged from
   * each trace's cached samples (computed now where the warm-up has not). Undefined when the store holds none of them.
   */
  statsOf(traceIds: readonly string[]): Baseline | undefined {
    const samples: TraceSamples[] = [];
    for (const id of traceIds) {
      const e = this.traces.get(id);
      if (!e) continue;
      if (!e.samples) {
        e.samples = traceSamples(e.spans);
        e.warmedSpans = e.spans.length;
        this.sampleBuilds.onDemand++;
        this.dirty.delete(id);
      }
      samples.push(e.samples);
    }
    return samples.length ? statsFromSamples(samples) : undefined;
  }

  private selectBaseline(
    keys: Array<{ service: string; name: string }>,
    maxTraces: number,
    exceptTraceId: string | undefined,
    beforeMs: number,
    minTraces: number,
    maxSpans: number
  ): Array<[string, Entry]> {
    const want = [...new Set(keys.map((k) => `${k.service}\u0000${k.name}`))];
    const earlier: Array<[string, Entry]> = [];
    const later: Array<[string, Entry]> = [];
    const entries = [...this.traces.entries()];
    for (let i = entries.length - 1; i >= 0 && earlier.length < maxTraces * 2; i--) {
      const [id, e] = entries[i];
      if (id === exceptTraceId || e.errors > 0) continue;
      let hit = false;
      for (const k of want)
        if (e.ops.has(k)) {
          hit = true;
          break;
        }
      if (!hit) continue;
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
      if (l) l.push(sum.durationMs);
      else byRoot.set(k, [sum.durationMs]);
    }
    const median = new Map([...byRoot].map(([k, d]) => [k, d.sort((a, b) => a - b)[Math.floor(d.length / 2)]]));
    const out: Array<[string, Entry]> = [];
    let spans = 0;
    for (const [id, e] of pool) {
      // Bounded work for huge traces: enough healthy examples, not the whole store.
      if (out.length >= maxTraces || (out.length > 0 && spans + e.spans.length > maxSpans)) break;
      if (e.endMs - e.startMs > 2 * (median.get(rootOf.get(id)!) ?? Infinity)) continue;
      out.push([id, e]);
      spans += e.spans.length;
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
