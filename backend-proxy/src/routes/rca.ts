/**
 * Root cause: GET /api/traces/:traceId/rca (one trace, baseline = recent healthy traffic of the same operations
 * from the trace source, kernel events of the trace's window from the exporters) and POST /api/rca (an incident
 * window given as data). The engine itself is pure (../rca); this file only gathers its inputs.
 */
import { Router } from 'express';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { z } from 'zod';
import { KernelEvent, type SourceStatus, type Span } from '../../../contract';
import type { ProxyConfig } from '../config';
import { badRequest } from '../http/errors';
import { rcaDuration } from '../metrics';
import { otlpToSpans, OtlpFormatError } from '../otlp/normalize';
import { baselineStats, rankTrace, rankWindow, type Baseline, type TraceRcaAnswer } from '../rca';
import { eventsFromAll } from '../sources/exporters';
import { settle } from '../sources/http';
import type { Sources } from '../sources';
import { traceById } from './traces';

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

const RcaConfigBody = z.record(z.string(), z.unknown()).optional();
const WindowBody = z.object({
  traces: z.unknown(),
  baseline: z.unknown().optional(),
  kernelEvents: z.array(KernelEvent).max(1_000_000).optional(),
  config: RcaConfigBody,
});

function spansOf(body: unknown, what: string): Span[] {
  try {
    return otlpToSpans(body);
  } catch (err) {
    if (err instanceof OtlpFormatError) throw badRequest(`${what}: ${err.message}`);
    throw err;
  }
}

/**
 * Built baselines, per proxy instance, for a few seconds: a user clicking through slow traces pays for one build.
 * The per-trace answer reads only the statistics (`baselineStats`; the chronic background level is for window RCA),
 * which the embedded store serves from per-trace samples it precomputes on ingest. A source that can only hand over
 * spans (Tempo: a search per operation) is served stale-while-revalidate: an entry past its TTL but younger than
 * BASELINE_STALE_MS is returned at once and refreshed in the background, so a re-click never waits on Tempo.
 */
interface CacheEntry { at: number; value?: Baseline; refreshing?: Promise<Baseline | undefined> }
const baselineCache = new WeakMap<Sources, Map<string, CacheEntry>>();
const BASELINE_TTL_MS = 10_000;
const BASELINE_STALE_MS = 60_000;

async function fetchBaseline(sources: Sources, keys: Array<{ service: string; name: string }>, traceId: string, beforeMs: number): Promise<Baseline | undefined> {
  if (sources.traces.baselineStats) return sources.traces.baselineStats(keys, traceId, beforeMs);
  const spans = await sources.traces.baseline(keys, traceId, beforeMs);
  return spans.length ? baselineStats(spans) : undefined;
}

/** Test hook: forgets every cached baseline of this proxy instance (a "first click" again). */
export function clearBaselineCache(sources: Sources): void {
  baselineCache.delete(sources);
}

async function cachedBaseline(sources: Sources, keys: Array<{ service: string; name: string }>, traceId: string, beforeMs: number): Promise<Baseline | undefined> {
  let cache = baselineCache.get(sources);
  if (!cache) baselineCache.set(sources, (cache = new Map()));
  const key = `${keys.map((k) => `${k.service}\u0000${k.name}`).sort().join('\u0001')}|${Math.floor(beforeMs / 5000)}`;
  const now = Date.now();
  const hit = cache.get(key);
  const c = cache;
  const build = (): Promise<Baseline | undefined> => {
    const p = fetchBaseline(sources, keys, traceId, beforeMs);
    const entry: CacheEntry = hit && 'value' in hit ? { at: hit.at, value: hit.value, refreshing: p } : { at: now, refreshing: p };
    if (c.size > 100 && !c.has(key)) c.clear();
    c.set(key, entry);
    p.then((value) => { if (c.get(key) === entry) c.set(key, { at: Date.now(), value }); }, () => { if (c.get(key) === entry) c.delete(key); });
    return p;
  };
  const age = hit && 'value' in hit ? now - hit.at : Infinity;
  if (age < BASELINE_TTL_MS) return hit!.value;
  // Spans-only sources (Tempo): a not too old entry answers at once while one refresh runs in the background.
  if (age < BASELINE_STALE_MS && !sources.traces.baselineStats) {
    if (!hit!.refreshing) build().catch(() => { /* the next click retries and reports */ });
    return hit!.value;
  }
  // One build per key at a time: concurrent clicks share it.
  return hit?.refreshing ?? build();
}

/** Gathers one trace, its baseline and kernel events, and ranks; shared by the route and the postmortem export. */
export async function rcaForTrace(sources: Sources, id: string): Promise<TraceRcaAnswer & { partial: boolean; sources: SourceStatus[] }> {
  const t0 = performance.now();
  const detail = await traceById(sources, id);
  const statuses: SourceStatus[] = [{ source: sources.traces.name, ok: true, latencyMs: Math.round(performance.now() - t0) }];
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
  // Kernel events and baseline in parallel; either missing degrades the answer (and says so), never fails it. The
  // exporters are asked first, so their answer travels while the baseline is gathered.
  const kernP = sources.exporters.length ? eventsFromAll(sources.exporters, { from: start - 5000, to: end + 1000, limit: 20_000 }) : undefined;
  const baseP = settle(`${sources.traces.name} (baseline)`, () => cachedBaseline(sources, keys, detail.traceId, start));
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
  if (!sources.exporters.length) missing.push('kernel events: no bpf-exporter configured');
  else if (kern && kern.sources.some((s) => !s.ok)) missing.push(`kernel events: ${kern.sources.filter((s) => !s.ok).map((s) => s.error).join('; ')}`);
  // Evidence the exporters counted but did not hand over: the ranking may lack some of it.
  if (kern?.suppressed) missing.push(`kernel events: ${kern.suppressed} event(s) of this window were counted but not recorded one by one (the exporters' per-second event budget); /metrics has their counts`);
  if (kern?.truncated) missing.push('kernel events: more fell in this window than an exporter answers at once; the ranking used the most recent ones');
  if (!base.status.ok) missing.push(`baseline: ${base.status.error}`);
  return { ...answer, traceId: detail.traceId, missing, partial: detail.partial ?? false, sources: statuses };
}

export function rcaRoutes(_config: ProxyConfig, sources: Sources): Router {
  const r = Router();

  r.get('/traces/:traceId/rca', async (req, res) => {
    res.json(await rcaForTrace(sources, String(req.params.traceId)));
  });

  r.post('/rca', (req, res) => {
    const parsed = WindowBody.safeParse(req.body);
    if (!parsed.success) throw badRequest(`body: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '$'}: ${i.message}`).join('; ')}`);
    const b = parsed.data;
    if (b.traces === undefined || b.traces === null) throw badRequest('body.traces: OTLP JSON traces of the incident window are required');
    const traces = spansOf(b.traces, 'traces');
    if (!traces.length) throw badRequest('traces: no spans in the given OTLP JSON');
    const baseline = b.baseline === undefined ? undefined : spansOf(b.baseline, 'baseline');
    const answer = timed('window', { 'hopscope.spans': traces.length }, () => rankWindow({
      traces, baseline, kernelEvents: b.kernelEvents, config: b.config as never,
    }));
    res.json(answer);
  });
  return r;
}
