/**
 * Bounds on what one trace may hand the engine, applied before anything else: at most `MAX_SPANS_PER_TRACE` spans
 * (the earliest-starting ones, so the root and the calls it made first stay) and at most `MAX_COPIES_PER_ID` spans
 * under one span id (a Kafka message's consumers or both sides of a Zipkin RPC are a handful; thousands are a broken
 * or hostile exporter). What was left out is said, never guessed around.
 */
import type { Span } from '../../../contract';

export const MAX_SPANS_PER_TRACE = 100_000;
export const MAX_COPIES_PER_ID = 256;

/**
 * The spans within the caps (the same array when nothing was cut) and a `missing` line per cap that cut.
 * `duplicates: false` (the tree found no span id twice) skips the count per id.
 */
export function capSpans(spans: Span[], duplicates = true): { spans: Span[]; missing: string[] } {
  const missing: string[] = [];
  let out = spans;
  if (out.length > MAX_SPANS_PER_TRACE) {
    const order = out.map((_, i) => i).sort((a, b) => out[a].startMs - out[b].startMs || a - b);
    const keep = new Uint8Array(out.length);
    for (let k = 0; k < MAX_SPANS_PER_TRACE; k++) keep[order[k]] = 1;
    const all = out;
    out = all.filter((_, i) => keep[i] === 1);
    missing.push(
      `spans: the trace has ${all.length} spans; only the ${MAX_SPANS_PER_TRACE} that started first were analysed (the engine's cap per trace)`
    );
  }
  if (!duplicates) return { spans: out, missing };
  const count = new Map<string, number>();
  let over = 0;
  const ids = new Set<string>();
  for (const s of out) {
    const n = (count.get(s.spanId) ?? 0) + 1;
    count.set(s.spanId, n);
    if (n > MAX_COPIES_PER_ID) {
      over++;
      ids.add(s.spanId);
    }
  }
  if (over) {
    const seen = new Map<string, number>();
    out = out.filter((s) => {
      const n = (seen.get(s.spanId) ?? 0) + 1;
      seen.set(s.spanId, n);
      return n <= MAX_COPIES_PER_ID;
    });
    const named = [...ids].slice(0, 3).join(', ');
    missing.push(
      `spans: ${over} span(s) beyond the first ${MAX_COPIES_PER_ID} under one span id were ignored (${ids.size} id(s): ${named}${ids.size > 3 ? ', …' : ''}); that many copies of one span is a broken exporter, not a trace`
    );
  }
  return { spans: out, missing };
}
