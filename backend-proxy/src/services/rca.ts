/**
 * Root cause, orchestrated: for one trace, the trace, its baseline (recent healthy traffic of the same operations,
 * cached per instance) and the kernel events of its window, fetched together, then ranked by the pure engine
 * (../rca); for an incident window given as data, the engine alone; for a time range (GET /api/rca), the range's
 * traces read from the trace source (a bounded selection: failed and slowest first, then a spread over the range),
 * the baseline from before it and its kernel events. Live runs use the configured engine settings
 * (HOPSCOPE_RCA_CONFIG: SLOs, λ weights, expected edges); a POST body's `config` overrides them field by field.
 * Each run is timed and traced, and runs off the event loop in the engine's worker pool (./rca-pool.ts; its queue is
 * bounded: past it, 503 + Retry-After): every caller of this service gets that, none runs the engine itself.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  isFailedSpan,
  type KernelEvidenceUsed,
  llmPhasesOf,
  type RcaRangeSample,
  type SavedRcaAnswerMeta,
  type SourceStatus,
  type Span,
  type TraceSummary,
} from '../../../contract';
import { upstream } from '../domain/errors';
import type { TimeRange } from '../domain/time-range';
import { rcaDuration } from '../metrics';
import {
  type EngineStateTable,
  type RankWindowInput,
  type RcaConfigInput,
  type TraceRcaAnswer,
  type WindowRcaAnswer,
} from '../rca';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { settle, SourceError } from '../sources/http';
import { EmbeddedTraceSource } from '../sources/traces';
import { BaselineCache } from './baseline-cache';
import type { KernelWindow } from '../evidence/window';
import type { EngineStateRequest, EngineStateService } from './engine-state';
import { mergeRcaConfig } from './rca-config';
import { RcaPool, type RcaPoolOptions } from './rca-pool';
import { traceBytes, WindowBudget } from './window-budget';

export { mergeRcaConfig };
import type { TraceService } from './traces';

export type TraceRootCause = TraceRcaAnswer & {
  partial: boolean;
  sources: SourceStatus[];
  kernelEvidence?: KernelEvidenceUsed;
  saved?: SavedRcaAnswerMeta[];
};

export type RangeRootCause = WindowRcaAnswer & {
  from: number;
  to: number;
  service?: string;
  sample: RcaRangeSample;
  sources: SourceStatus[];
  kernelEvidence?: KernelEvidenceUsed;
};

/** Kernel events of a window: the exporters' rings, or the evidence kept in the database when they no longer reach back (./kernel-evidence). */
export interface KernelEvidenceReader {
  forWindow(q: { from: number; to: number; limit: number }): Promise<KernelWindow>;
}

export interface RangeQuery {
  range: TimeRange;
  service?: string;
  maxTraces?: number;
}

/**
 * Traces a range root cause analyses by default, and the most one request reads (bounded work per request: a larger
 * maxTraces is cut to it, and the answer says so); the global budget (./window-budget.ts) bounds them together.
 */
const RANGE_DEFAULT_TRACES = 500;
export const RANGE_MAX_TRACES = 1000;
/** The embedded store lists at most this many traces of a range to choose from. */
const RANGE_SCAN = 100_000;
const FETCH_CONCURRENCY = 8;

/** Evenly spaced picks of `n` out of `list` (a spread over the range, not its first or last part). */
function spread<T>(list: T[], n: number): T[] {
  if (list.length <= n) return list;
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(list[Math.floor(((i + 0.5) * list.length) / n)]);
  return out;
}

const tracer = trace.getTracer('hopscope-proxy');

/** The inference server spans of these traces: whose engine state to read (pod, and the middle of its queue). */
function engineStateRequests(traces: Span[][]): EngineStateRequest[] {
  const out: EngineStateRequest[] = [];
  for (const tr of traces)
    for (const s of tr) {
      const lp = s.kind === 'client' ? undefined : llmPhasesOf(s, tr);
      if (!lp) continue;
      const q = lp.phases.find((p) => p.name === 'queue');
      out.push({ service: lp.service, pod: lp.pod, atMs: lp.startMs + (q ? q.durationMs / 2 : 0) });
    }
  return out;
}

/** Runs the engine inside a span and times it (the wait for a worker included). */
function timed<T>(kind: 'trace' | 'window', attrs: Record<string, number | string>, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(`rca ${kind}`, { attributes: attrs }, async (span) => {
    const t0 = performance.now();
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      rcaDuration.observe({ kind }, (performance.now() - t0) / 1000);
      span.end();
    }
  });
}

export class RcaService {
  private baselines: BaselineCache;
  private pool: RcaPool;
  private windows: WindowBudget;

  /**
   * `exporters` is the live list (DNS discovery updates it in place); `opts.config`: the configured engine settings
   * (HOPSCOPE_RCA_CONFIG) for every live root cause.
   */
  constructor(
    private traces: TraceService,
    private exporters: ExporterSource[],
    private opts: {
      config?: RcaConfigInput;
      evidence?: KernelEvidenceReader;
      saved?: { ofTrace(traceId: string): Promise<SavedRcaAnswerMeta[]> };
      /** The inference engines' metrics (queue, KV cache) for the LLM phases; absent: the answers say so. */
      engineState?: EngineStateService;
      /** The engine's worker threads and queue bound. */
      pool?: RcaPoolOptions;
      /** The global budget of window work, shared with run compare (default: one of its own). */
      windows?: WindowBudget;
    } = {}
  ) {
    this.baselines = new BaselineCache(traces.source);
    this.pool = new RcaPool(opts.pool);
    this.windows = opts.windows ?? new WindowBudget();
  }

  /** The engine's worker pool (the ingest service parses large OTLP bodies there too). */
  get engine(): RcaPool {
    return this.pool;
  }

  /** One engine worker started ahead of the first request; the others start on demand. */
  start(): void {
    this.pool.warm();
  }

  /** Ends the engine's workers (analyses still running answer 503). */
  stop(): Promise<void> {
    return this.pool.close();
  }

  /** A window's kernel events: kept evidence fills in where the rings no longer reach (notes say so). */
  private kernelFor(
    from: number,
    to: number,
    limit: number
  ): Promise<
    (Awaited<ReturnType<typeof eventsFromAll>> & { used?: KernelEvidenceUsed; notes?: string[] }) | undefined
  > {
    if (this.opts.evidence) return this.opts.evidence.forWindow({ from, to, limit });
    return this.exporters.length ? eventsFromAll(this.exporters, { from, to, limit }) : Promise.resolve(undefined);
  }

  /** The engine state of these traces' inference servers, read once (one Prometheus query per figure). */
  private async engineStateFor(traces: Span[][]): Promise<{ table: EngineStateTable; missing: string[] } | undefined> {
    const requests = engineStateRequests(traces);
    if (!requests.length || !this.opts.engineState) return undefined;
    const read = await this.opts.engineState.lookup(requests);
    // As data: the engine runs in a worker thread, where a lookup function cannot go.
    const table: EngineStateTable = [];
    for (const r of requests) {
      const state = read.lookup(r.service, r.pod, r.atMs);
      if (state) table.push([r.pod, r.atMs, state]);
    }
    return { table, missing: read.missing };
  }

  /** The engine settings live root causes run with. */
  get config(): RcaConfigInput | undefined {
    return this.opts.config;
  }

  /** One trace ranked; a missing baseline or kernel source degrades the answer (and says so), never fails it. */
  async forTrace(id: string): Promise<TraceRootCause> {
    const source = this.traces.source;
    const t0 = performance.now();
    const detail = await this.traces.byId(id);
    const statuses: SourceStatus[] = [{ source: source.name, ok: true, latencyMs: Math.round(performance.now() - t0) }];
    const spans = detail.spans;
    const pairs = new Map<string, { service: string; name: string }>();
    let start = Infinity;
    let end = -Infinity;
    for (const s of spans) {
      const k = `${s.service}\u0000${s.name}`;
      if (!pairs.has(k)) pairs.set(k, { service: s.service, name: s.name });
      if (s.startMs < start) start = s.startMs;
      if (s.endMs > end) end = s.endMs;
    }
    const keys = [...pairs.values()];
    // The exporters are asked first, so their answer travels while the baseline is gathered.
    const exporters = this.exporters;
    const kernP = this.kernelFor(start - 5000, end + 1000, 20_000);
    const baseP = settle(`${source.name} (baseline)`, () => this.baselines.get(keys, detail.traceId, start));
    const savedP = this.opts.saved?.ofTrace(detail.traceId);
    const engineP = this.engineStateFor([spans]);
    const [base, kern, saved, engine] = await Promise.all([baseP, kernP, savedP, engineP]);
    statuses.push(base.status);
    if (kern) statuses.push(...kern.sources);
    const answer = await timed('trace', { 'hopscope.trace_id': detail.traceId, 'hopscope.spans': spans.length }, () =>
      this.pool.rankTrace({
        spans,
        baseline: base.value,
        kernelEvents: kern ? kern.events : undefined,
        config: this.opts.config,
        engineStates: engine?.table,
      })
    );
    const missing = [...answer.missing];
    if (engine) missing.push(...engine.missing);
    if (detail.partial) missing.unshift('trace: the trace source answered PARTIAL, some spans may be missing');
    if (!exporters.length) missing.push('kernel events: no bpf-exporter configured');
    else if (kern && kern.sources.some((s) => !s.ok))
      missing.push(
        `kernel events: ${kern.sources
          .filter((s) => !s.ok)
          .map((s) => s.error)
          .join('; ')}`
      );
    // Evidence the exporters counted but did not hand over: the ranking may lack some of it.
    if (kern?.suppressed)
      missing.push(
        `kernel events: ${kern.suppressed} event(s) of this window were counted but not recorded one by one (the exporters' per-second event budget); /metrics has their counts`
      );
    if (kern?.truncated)
      missing.push(
        'kernel events: more fell in this window than an exporter answers at once; the ranking used the most recent ones'
      );
    if (kern?.notes) for (const n of kern.notes) missing.push(n);
    if (!base.status.ok) missing.push(`baseline: ${base.status.error}`);
    return {
      ...answer,
      traceId: detail.traceId,
      missing,
      partial: detail.partial ?? false,
      sources: statuses,
      ...(kern?.used ? { kernelEvidence: kern.used } : {}),
      ...(saved?.length ? { saved } : {}),
    };
  }

  /** An incident window given as data (offline postmortems, benchmarks); its `config` on top of the configured one. */
  forWindow(input: RankWindowInput): Promise<WindowRcaAnswer> {
    const config = mergeRcaConfig(this.opts.config, input.config);
    return timed('window', { 'hopscope.spans': input.traces.length }, () => this.pool.rankWindow({ ...input, config }));
  }

  /** POST /api/rca's raw JSON body: parsed, checked (a 400 naming the field) and ranked in the engine's worker. */
  forWindowBody(body: Buffer): Promise<WindowRcaAnswer> {
    return timed('window', { 'hopscope.body_bytes': body.length }, () =>
      this.pool.rankWindowBody(body, this.opts.config)
    );
  }

  /**
   * A time range's root cause from the traces the proxy can read: every failed trace of the range (up to half the
   * budget), the slowest, then traces spread evenly over the range, at most `maxTraces`; its baseline from healthy
   * traffic before the range; the range's kernel events. The answer says what it read (`sample`).
   */
  async forRange(q: RangeQuery): Promise<RangeRootCause> {
    const budget = Math.min(RANGE_MAX_TRACES, q.maxTraces ?? RANGE_DEFAULT_TRACES);
    // Admitted, or 503 + Retry-After past the global budget, before anything is read.
    const ticket = this.windows.admit('GET /api/rca', budget);
    try {
      return await this.rangeAnswer(q, budget, (bytes) => ticket.hold(bytes), ticket.byteBudget);
    } finally {
      ticket.release();
    }
  }

  private async rangeAnswer(
    q: RangeQuery,
    budget: number,
    hold: (bytes: number) => boolean,
    byteBudget: number
  ): Promise<RangeRootCause> {
    const { range, service } = q;
    const source = this.traces.source;
    const embedded = source instanceof EmbeddedTraceSource;
    const statuses: SourceStatus[] = [];
    const exporters = this.exporters;
    const kernP = this.kernelFor(range.from - 1000, range.to + 1000, 50_000);
    const t0 = performance.now();
    const base = { from: range.from, to: range.to, service };
    let found: TraceSummary[];
    let failed: TraceSummary[];
    let slowest: TraceSummary[];
    try {
      const searches = await Promise.all([
        source.search({ ...base, limit: embedded ? RANGE_SCAN : budget }),
        source.search({ ...base, status: 'error', limit: Math.ceil(budget / 2) }),
        embedded ? source.search({ ...base, status: 'timeout', limit: Math.ceil(budget / 2) }) : Promise.resolve([]),
        source.search({ ...base, sort: 'duration', limit: Math.ceil(budget / 4) }),
      ]);
      found = searches[0];
      failed = [...searches[1], ...searches[2]].slice(0, Math.ceil(budget / 2));
      slowest = searches[3];
    } catch (err) {
      if (err instanceof SourceError) throw upstream(err.message);
      throw err;
    }
    // Failed first, then the slowest, then a spread over the range (oldest to newest), without repeats.
    const picked = new Map<string, TraceSummary>();
    for (const t of [...failed, ...slowest]) if (picked.size < budget) picked.set(t.traceId, t);
    const rest = found.filter((t) => !picked.has(t.traceId)).sort((a, b) => a.startMs - b.startMs);
    for (const t of spread(rest, budget - picked.size)) picked.set(t.traceId, t);
    const ids = [...picked.keys()];
    const traces: Span[][] = [];
    let unreadable = 0;
    let next = 0;
    let cut = false;
    await Promise.all(
      Array.from({ length: Math.min(FETCH_CONCURRENCY, ids.length) }, async () => {
        while (next < ids.length && !cut) {
          const d = await source.get(ids[next++]).catch(() => undefined);
          if (!d?.spans.length) unreadable++;
          // Past the byte budget of every window answer together: this answer reads no more (missing says so).
          else if (!hold(traceBytes(d.spans))) cut = true;
          else traces.push(d.spans);
        }
      })
    );
    statuses.push({ source: source.name, ok: true, latencyMs: Math.round(performance.now() - t0) });
    // Deterministic order (the engine's answer must not depend on fetch timing).
    traces.sort((a, b) => (a[0].traceId < b[0].traceId ? -1 : a[0].traceId > b[0].traceId ? 1 : 0));
    const pairs = new Map<string, { service: string; name: string }>();
    for (const tr of traces)
      for (const s of tr) pairs.set(`${s.service}\u0000${s.name}`, { service: s.service, name: s.name });
    const [baseline, kern, engine] = await Promise.all([
      pairs.size
        ? settle(`${source.name} (baseline)`, () => this.baselines.get([...pairs.values()], '', range.from))
        : undefined,
      kernP,
      this.engineStateFor(traces),
    ]);
    if (baseline) statuses.push(baseline.status);
    if (kern) statuses.push(...kern.sources);
    const failedRead = traces.filter((tr) => tr.some(isFailedSpan)).length;
    const sampledOut = embedded ? found.length > traces.length + unreadable : true;
    const how = embedded
      ? `${traces.length} of the ${found.length} trace(s) the embedded store holds for the range${found.length >= RANGE_SCAN ? ` (it lists at most ${RANGE_SCAN})` : ''}: every failed one first (up to half of ${budget}), then the slowest, then a spread over the range`
      : `${traces.length} trace(s) read from ${source.name}: its failed traces (up to ${Math.ceil(budget / 2)}), the slowest of what its search returned, and up to ${budget} of the range (Tempo's search answers a sample, not every trace)`;
    const answer = await timed(
      'window',
      { 'hopscope.spans': traces.reduce((n, t) => n + t.length, 0), 'hopscope.traces': traces.length },
      () =>
        this.pool.rankWindow({
          traces,
          baseline: baseline?.value,
          kernelEvents: kern?.events,
          config: this.opts.config,
          engineStates: engine?.table,
        })
    );
    const missing = [...answer.missing];
    if (engine) missing.push(...engine.missing);
    if (q.maxTraces !== undefined && q.maxTraces > RANGE_MAX_TRACES)
      missing.push(
        `traces: maxTraces=${q.maxTraces} asked; a range answer reads at most ${RANGE_MAX_TRACES} traces (the proxy's per-request cap)`
      );
    if (cut)
      missing.push(
        `traces: ${traces.length} of the ${ids.length} picked trace(s) read; the window answers in progress reached the proxy's budget of about ${Math.round(byteBudget / 1048576)} MiB of spans held at once (HOPSCOPE_WINDOW_MAX_BYTES)`
      );
    if (!traces.length)
      missing.unshift(`traces: ${source.name} holds no trace${service ? ` through ${service}` : ''} in this range`);
    if (unreadable) missing.push(`traces: ${unreadable} of the picked trace(s) could not be read from ${source.name}`);
    if (baseline && !baseline.status.ok) missing.push(`baseline: ${baseline.status.error}`);
    if (!exporters.length) missing.push('kernel events: no bpf-exporter configured');
    else if (kern?.sources.some((s) => !s.ok))
      missing.push(
        `kernel events: ${kern.sources
          .filter((s) => !s.ok)
          .map((s) => s.error)
          .join('; ')}`
      );
    if (kern?.truncated)
      missing.push(
        'kernel events: more fell in this range than an exporter answers at once; the ranking used the most recent ones'
      );
    if (kern?.notes) for (const n of kern.notes) missing.push(n);
    return {
      ...answer,
      missing,
      ...base,
      ...(kern?.used ? { kernelEvidence: kern.used } : {}),
      sample: { found: found.length, analysed: traces.length, failed: failedRead, sampled: sampledOut, how },
      sources: statuses,
    };
  }
}
