/**
 * Always keeps errors and timeouts, and the slow tail (a span over its operation's P99 in this process, slow-tail.ts),
 * even in traces the head sampler dropped.
 *
 * How: dropped traces are still recorded (SamplingDecision.RECORD). This processor holds their finished spans in a
 * small buffer shared by every processor of the process (keyed by trace id, bounded, 30 s TTL). When a span of that
 * trace ends with status ERROR (our hops set ERROR on failures and on timeouts, with `error.type=timeout`), the trace is
 * marked kept: its buffered spans and every later span of it in this process are exported as if sampled; so is a trace
 * with a span that lasted longer than the P99 of its operation's last 1,000 spans here (callers' spans of a slow call
 * are slow too, so the slow path is kept end to end, as errors are). Callers see a
 * failed downstream call as a failed client span, so the whole error path is exported; sibling hops in another process
 * that succeeded stay dropped (documented limit of head sampling without a collector).
 */
import { SpanStatusCode, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SlowTail } from './slow-tail';

interface Buffered {
  span: ReadableSpan;
  to: SpanProcessor;
  at: number;
}

const MAX_TRACES = 5000;
const TTL_MS = 30_000;
const buffer = new Map<string, Buffered[]>();
const kept = new Map<string, number>();
/** Shared like the buffer: one tail per operation per process, whichever processor sees its spans. */
const tail = new SlowTail();

function asSampled(span: ReadableSpan): ReadableSpan {
  const ctx = span.spanContext();
  const sampledCtx: SpanContext = { ...ctx, traceFlags: ctx.traceFlags | TraceFlags.SAMPLED };
  const view = Object.create(span) as ReadableSpan & { spanContext: () => SpanContext };
  view.spanContext = () => sampledCtx;
  return view;
}

function evict(now: number): void {
  if (buffer.size > MAX_TRACES) {
    for (const k of buffer.keys()) {
      buffer.delete(k);
      if (buffer.size <= MAX_TRACES * 0.8) break;
    }
  }
  if (kept.size > MAX_TRACES)
    for (const [k, t] of kept) if (now - t > TTL_MS || kept.size > MAX_TRACES * 0.8) kept.delete(k);
}

export class KeepErrorsSpanProcessor implements SpanProcessor {
  constructor(private readonly delegate: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.delegate.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const ctx = span.spanContext();
    // Every span counts for its operation's P99, sampled or not.
    const slow = tail.observe(span.name, span.duration[0] * 1e3 + span.duration[1] / 1e6);
    if (ctx.traceFlags & TraceFlags.SAMPLED) {
      this.delegate.onEnd(span);
      return;
    }
    const now = Date.now();
    if (kept.has(ctx.traceId)) {
      this.delegate.onEnd(asSampled(span));
      return;
    }
    if (span.status.code === SpanStatusCode.ERROR || slow) {
      kept.set(ctx.traceId, now);
      for (const b of buffer.get(ctx.traceId) ?? []) b.to.onEnd(asSampled(b.span));
      buffer.delete(ctx.traceId);
      this.delegate.onEnd(asSampled(span));
      evict(now);
      return;
    }
    let list = buffer.get(ctx.traceId);
    if (!list) {
      list = [];
      buffer.set(ctx.traceId, list);
      evict(now);
    }
    if (list.length < 64) list.push({ span, to: this.delegate, at: now });
    // Drop stale traces lazily (oldest first in insertion order).
    for (const [k, v] of buffer) {
      if (now - v[0].at <= TTL_MS) break;
      buffer.delete(k);
    }
  }

  forceFlush(): Promise<void> {
    return this.delegate.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}

/** For tests: how many traces are buffered / kept right now. */
export function keepErrorsState(): { buffered: number; kept: number } {
  return { buffered: buffer.size, kept: kept.size };
}
