/**
 * Trace-id exemplars on latency histograms (OpenMetrics `# {trace_id="…",span_id="…"} value ts`), so a point on a
 * latency panel opens its trace. Only for spans whose trace is exported: sampled, or kept because it failed (the
 * KeepErrorsSpanProcessor exports failed traces the head sampler dropped).
 */
import { TraceFlags, isSpanContextValid, type Span } from '@opentelemetry/api';
import type { Histogram } from 'prom-client';

export type ExemplarLabels = Record<string, string>;

export function traceExemplar(span: Span | undefined, failed = false): ExemplarLabels | undefined {
  const ctx = span?.spanContext();
  if (!ctx || !isSpanContextValid(ctx)) return undefined;
  if (!(ctx.traceFlags & TraceFlags.SAMPLED) && !failed) return undefined;
  return { trace_id: ctx.traceId, span_id: ctx.spanId };
}

/** Observes a histogram made with `enableExemplars: true` (which only takes the object form of observe). */
export function observeWithExemplar<T extends string>(
  h: Histogram<T>,
  labels: Partial<Record<T, string | number>>,
  value: number,
  exemplar?: ExemplarLabels
): void {
  h.observe({ labels, value, exemplarLabels: (exemplar ?? {}) as Partial<Record<T, string | number>> });
}
