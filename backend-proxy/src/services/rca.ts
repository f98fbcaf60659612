/**
 * Root cause, orchestrated: for one trace, the trace, its baseline (recent healthy traffic of the same operations,
 * cached per instance) and the kernel events of its window, fetched together, then ranked by the pure engine
 * (../rca); for an incident window given as data, the engine alone. Each run is timed and traced.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { SourceStatus } from '../../../contract';
import { rcaDuration } from '../metrics';
import { rankTrace, rankWindow, type RankWindowInput, type TraceRcaAnswer, type WindowRcaAnswer } from '../rca';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import { settle } from '../sources/http';
import { BaselineCache } from './baseline-cache';
import type { TraceService } from './traces';

export type TraceRootCause = TraceRcaAnswer & { partial: boolean; sources: SourceStatus[] };

const tracer = trace.getTracer('hopscope-proxy');

/** Runs the engine inside a span and times it. */
function timed<T>(kind: 'trace' | 'window', attrs: Record<string, number | string>, fn: () => T): T {
  return tracer.startActiveSpan(`rca ${kind}`, { attributes: attrs }, (span) => {
    const t0 = performance.now();
    try {
      return fn();
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

  /** `exporters` is the live list (DNS discovery updates it in place). */
  constructor(private traces: TraceService, private exporters: ExporterSource[]) {
    this.baselines = new BaselineCache(traces.source);
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
    const kernP = exporters.length ? eventsFromAll(exporters, { from: start - 5000, to: end + 1000, limit: 20_000 }) : undefined;
    const baseP = settle(`${source.name} (baseline)`, () => this.baselines.get(keys, detail.traceId, start));
    const [base, kern] = await Promise.all([baseP, kernP]);
    statuses.push(base.status);
    if (kern) statuses.push(...kern.sources);
    const answer = timed('trace', { 'hopscope.trace_id': detail.traceId, 'hopscope.spans': spans.length }, () => rankTrace({
      spans,
      baseline: base.value,
      kernelEvents: kern ? kern.events : undefined,
    }));
    const missing = [...answer.missing];
    if (detail.partial) missing.unshift('trace: the trace source answered PARTIAL, some spans may be missing');
    if (!exporters.length) missing.push('kernel events: no bpf-exporter configured');
    else if (kern && kern.sources.some((s) => !s.ok)) missing.push(`kernel events: ${kern.sources.filter((s) => !s.ok).map((s) => s.error).join('; ')}`);
    // Evidence the exporters counted but did not hand over: the ranking may lack some of it.
    if (kern?.suppressed) missing.push(`kernel events: ${kern.suppressed} event(s) of this window were counted but not recorded one by one (the exporters' per-second event budget); /metrics has their counts`);
    if (kern?.truncated) missing.push('kernel events: more fell in this window than an exporter answers at once; the ranking used the most recent ones');
    if (!base.status.ok) missing.push(`baseline: ${base.status.error}`);
    return { ...answer, traceId: detail.traceId, missing, partial: detail.partial ?? false, sources: statuses };
  }

  /** An incident window given as data (offline postmortems, benchmarks). */
  forWindow(input: RankWindowInput): WindowRcaAnswer {
    return timed('window', { 'hopscope.spans': input.traces.length }, () => rankWindow(input));
  }
}
