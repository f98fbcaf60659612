/**
 * Tempo over its HTTP API: trace by id (v2 `{trace: {resourceSpans}}` with `status: PARTIAL`, falling back to v1
 * `batches` on older Tempo; ids base64), TraceQL search (hex ids with leading zeros stripped → left-padded).
 * TraceQL is built from whitelisted names and escaped string literals only.
 */
import type { Span, TraceDetail, TraceStatus, TraceSummary } from '../../../contract';
import { otlpToSpans, tempoPartial } from '../otlp/normalize';
import type { TraceQuery } from '../store/trace-store';
import { callJson, SourceError } from './http';
import type { TraceSource } from './traces';

const HEX_ID = /^[0-9a-fA-F]{1,32}$/;
/** The window sample (spansInWindow): up to (WINDOW_SLICES + 1) × WINDOW_PER_SLICE traces. */
const WINDOW_SLICES = 10;
const WINDOW_PER_SLICE = 20;
const WINDOW_FETCH_CONCURRENCY = 8;
/** `sort=duration` on Tempo: the slowest among this many traces of the range (Tempo cannot order a search). */
const SLOWEST_OF = 1000;
/** A run's traces (runTraces): up to RUN_SLICES × RUN_PER_SLICE traces spread over the run, plus its failed ones. */
const RUN_SLICES = 20;
const RUN_PER_SLICE = 20;

/** A TraceQL string literal: backslash and double quote escaped, control characters refused. */
function traceqlString(v: string): string {
  if (/[\u0000-\u001f]/.test(v)) throw new Error('TraceQL value contains control characters');
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

type TempoQuery = TraceQuery & { operation?: string; notError?: boolean; runId?: string };

export function buildTraceQL(q: TempoQuery): string {
  const parts: string[] = [];
  // The chain copies the `hopscope.run_id` baggage onto its spans as a span attribute.
  if (q.runId) parts.push(`span.hopscope.run_id = ${traceqlString(q.runId)}`);
  if (q.service) parts.push(`resource.service.name = ${traceqlString(q.service)}`);
  if (q.operation) parts.push(`name = ${traceqlString(q.operation)}`);
  if (q.minDurationMs !== undefined) parts.push(`duration >= ${Math.floor(q.minDurationMs)}ms`);
  if (q.maxDurationMs !== undefined) parts.push(`duration <= ${Math.ceil(q.maxDurationMs)}ms`);
  // TraceQL has no "timeout" status: a timed-out span is an error span.
  if (q.status === 'error' || q.status === 'timeout') parts.push('status = error');
  else if (q.status === 'ok') parts.push('status = ok');
  else if (q.status === 'unset') parts.push('status = unset');
  if (q.notError) parts.push('status != error');
  return parts.length ? `{ ${parts.join(' && ')} }` : '{ }';
}

interface TempoSearchTrace {
  traceID: string;
  rootServiceName?: string;
  rootTraceName?: string;
  startTimeUnixNano?: string;
  durationMs?: number;
  spanSets?: Array<{
    spans?: Array<{
      spanID: string;
      name?: string;
      startTimeUnixNano?: string;
      durationNanos?: string;
      attributes?: unknown;
    }>;
  }>;
  spanSet?: { spans?: Array<{ spanID: string; name?: string; startTimeUnixNano?: string; durationNanos?: string }> };
}

function padTraceId(id: string): string {
  return id.toLowerCase().padStart(32, '0');
}

export class TempoSource implements TraceSource {
  readonly name = 'tempo';
  constructor(
    public baseUrl: string,
    private timeoutMs: number
  ) {}

  private async call<T>(path: string, params?: Record<string, string>): Promise<{ status: number; body: T }> {
    const url = `${this.baseUrl}${path}${params ? `?${new URLSearchParams(params)}` : ''}`;
    return callJson<T>(url, { source: this.name, timeoutMs: this.timeoutMs, retries: 1 });
  }

  private fail(status: number, body: unknown, what: string): never {
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : JSON.stringify(body).slice(0, 200);
    throw new SourceError(this.name, `${what}: HTTP ${status}${text ? ` (${text})` : ''}`, status);
  }

  async get(traceId: string): Promise<TraceDetail | undefined> {
    if (!HEX_ID.test(traceId)) throw new SourceError(this.name, `"${traceId}" is not a hex trace id`);
    const id = padTraceId(traceId);
    let r = await this.call<unknown>(`/api/v2/traces/${id}`);
    if (r.status === 404 && (r.body === '' || r.body === undefined || r.body === null)) {
      // 404 with an empty body is "trace not found" on v2; a v2-less Tempo (< 2.6) answers 404 "page not found": try v1.
      return undefined;
    }
    if (r.status === 404) r = await this.call<unknown>(`/api/traces/${id}`);
    if (r.status === 404) return undefined;
    if (r.status < 200 || r.status >= 300) this.fail(r.status, r.body, `trace ${id}`);
    let spans: Span[];
    try {
      spans = otlpToSpans(r.body);
    } catch (err) {
      throw new SourceError(this.name, `trace ${id} is not a trace Tempo would serve: ${(err as Error).message}`);
    }
    const p = tempoPartial(r.body);
    const detail: TraceDetail = { traceId: id, spans: spans.sort((a, b) => a.startMs - b.startMs) };
    if (p.partial) detail.partial = true;
    return detail;
  }

  private async searchRaw(q: TempoQuery): Promise<TempoSearchTrace[]> {
    const params: Record<string, string> = { q: buildTraceQL(q), limit: String(q.limit ?? 100) };
    if (q.from !== undefined) params.start = String(Math.floor(q.from / 1000));
    if (q.to !== undefined) params.end = String(Math.ceil(q.to / 1000));
    if (q.operation) params.spss = '20';
    const r = await this.call<{ traces?: TempoSearchTrace[] }>('/api/search', params);
    if (r.status < 200 || r.status >= 300) this.fail(r.status, r.body, 'search');
    if (typeof r.body !== 'object' || r.body === null)
      throw new SourceError(this.name, 'search answered something that is not JSON');
    return r.body.traces ?? [];
  }

  async search(q: TraceQuery): Promise<TraceSummary[]> {
    // Tempo has no ordering: for the slowest, ask for up to SLOWEST_OF traces of the range and sort them here.
    const traces = await this.searchRaw(
      q.sort === 'duration' ? { ...q, limit: Math.max(q.limit ?? 100, SLOWEST_OF) } : q
    );
    if (q.sort === 'duration') traces.sort((a, b) => (b.durationMs ?? 0) - (a.durationMs ?? 0)).splice(q.limit ?? 100);
    const status: TraceStatus = q.status === 'timeout' || q.status === 'error' ? 'error' : (q.status ?? 'unset');
    return traces
      .map((t) => {
        const spans = t.spanSets?.flatMap((s) => s.spans ?? []) ?? t.spanSet?.spans ?? [];
        return {
          traceId: padTraceId(t.traceID),
          rootService: t.rootServiceName ?? '<root span not yet received>',
          rootName: t.rootTraceName ?? '',
          startMs: t.startTimeUnixNano ? Number(BigInt(t.startTimeUnixNano) / 1000n) / 1000 : 0,
          durationMs: t.durationMs ?? 0,
          status,
          spanCount: spans.length || undefined,
        } as TraceSummary;
      })
      .map((s) => {
        if (s.spanCount === undefined) delete s.spanCount;
        return s;
      });
  }

  /** Baseline from TraceQL: the matched spans of healthy traces of each service+operation (durations only). */
  async baseline(
    keys: Array<{ service: string; name: string }>,
    exceptTraceId?: string,
    beforeMs?: number
  ): Promise<Span[]> {
    // The hour before the analysed trace (or before now): recent healthy traffic, not the incident itself.
    const now = Math.min(Date.now(), beforeMs ?? Infinity);
    const out: Span[] = [];
    await Promise.all(
      keys.slice(0, 12).map(async (k) => {
        const traces = await this.searchRaw({
          service: k.service,
          operation: k.name,
          notError: true,
          from: now - 3600_000,
          to: now,
          limit: 20,
        });
        for (const t of traces) {
          const id = padTraceId(t.traceID);
          if (id === exceptTraceId) continue;
          for (const s of t.spanSets?.flatMap((x) => x.spans ?? []) ?? t.spanSet?.spans ?? []) {
            if (!s.startTimeUnixNano || !s.durationNanos) continue;
            const startMs = Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000;
            out.push({
              traceId: id,
              spanId: s.spanID.padStart(16, '0'),
              name: k.name,
              service: k.service,
              kind: 'unspecified',
              startMs,
              endMs: startMs + Number(s.durationNanos) / 1e6,
              status: 'ok',
              attributes: {},
              resource: { 'service.name': k.service },
            });
          }
        }
      })
    );
    return out;
  }

  /**
   * Windows from Tempo (services, pods, compare, TGI's TTFT): a bounded sample of whole traces spread over the window,
   * not only its most recent ones: the window cut into WINDOW_SLICES searches of WINDOW_PER_SLICE traces each, plus
   * the failed traces of the window (errors are few and matter most). Traces are fetched WINDOW_FETCH_CONCURRENCY at a
   * time; one that cannot be fetched is skipped (the others still count).
   */
  async spansInWindow(from: number, to: number): Promise<Span[]> {
    const slices = Math.max(1, Math.min(WINDOW_SLICES, Math.floor((to - from) / 1000)));
    const width = (to - from) / slices;
    const searches = Array.from({ length: slices }, (_, i) =>
      this.searchRaw({
        from: from + i * width,
        to: i === slices - 1 ? to : from + (i + 1) * width,
        limit: WINDOW_PER_SLICE,
      })
    );
    searches.push(this.searchRaw({ from, to, status: 'error', limit: WINDOW_PER_SLICE }));
    const settled = await Promise.allSettled(searches);
    // Every search failing is the source failing; some failing only thins the sample.
    if (settled.every((x) => x.status === 'rejected')) throw (settled[0] as PromiseRejectedResult).reason;
    const ids = [
      ...new Set(settled.flatMap((x) => (x.status === 'fulfilled' ? x.value : [])).map((t) => padTraceId(t.traceID))),
    ];
    const spans: Span[] = [];
    for (const tr of (await this.fetchAll(ids)).traces) for (const s of tr) spans.push(s);
    return spans;
  }

  /** Whole traces by id, WINDOW_FETCH_CONCURRENCY at a time; one that cannot be fetched is counted, not fatal. */
  private async fetchAll(ids: string[]): Promise<{ traces: Span[][]; failed: number }> {
    const traces: Span[][] = [];
    let failed = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(WINDOW_FETCH_CONCURRENCY, ids.length) }, async () => {
        while (next < ids.length) {
          const d = await this.get(ids[next++]).catch(() => undefined);
          if (d?.spans.length) traces.push(d.spans);
          else failed++;
        }
      })
    );
    return { traces, failed };
  }

  /**
   * One load-test run's traces: TraceQL `{ span.hopscope.run_id = "<id>" }` over the run's window, as a bounded sample
   * spread over it (RUN_SLICES searches of RUN_PER_SLICE each, plus the run's failed traces), then fetched whole.
   * `sampled`: some search was full, so the run has more traces than were read. Traces in the order of their ids.
   */
  async runTraces(
    runId: string,
    from: number,
    to: number
  ): Promise<{ traces: Span[][]; sampled: boolean; failed: number }> {
    const slices = Math.max(1, Math.min(RUN_SLICES, Math.floor((to - from) / 1000)));
    const width = (to - from) / slices;
    const searches = Array.from({ length: slices }, (_, i) =>
      this.searchRaw({
        runId,
        from: from + i * width,
        to: i === slices - 1 ? to : from + (i + 1) * width,
        limit: RUN_PER_SLICE,
      })
    );
    searches.push(this.searchRaw({ runId, from, to, status: 'error', limit: RUN_PER_SLICE }));
    const settled = await Promise.allSettled(searches);
    if (settled.every((x) => x.status === 'rejected')) throw (settled[0] as PromiseRejectedResult).reason;
    const sampled = settled.some((x) => x.status === 'rejected' || x.value.length >= RUN_PER_SLICE);
    const ids = [
      ...new Set(settled.flatMap((x) => (x.status === 'fulfilled' ? x.value : [])).map((t) => padTraceId(t.traceID))),
    ].sort();
    const got = await this.fetchAll(ids);
    got.traces.sort((a, b) => (a[0].traceId < b[0].traceId ? -1 : a[0].traceId > b[0].traceId ? 1 : 0));
    return { traces: got.traces, sampled, failed: got.failed };
  }

  async health(): Promise<void> {
    const r = await this.call<unknown>('/ready');
    if (r.status !== 200) this.fail(r.status, r.body, 'not ready');
  }
}
