/**
 * W3C Trace Context on the client side: the `traceparent` the driver may send, and the Level 2 `traceresponse` a
 * server may answer (`00-<trace-id>-<span-id>-<flags>`), so every request knows its trace id — or says it has none.
 */
import { randomFillSync } from 'node:crypto';

export type TraceIdSource = 'sent' | 'traceresponse' | 'none';

// One buffer refilled per id: cheaper than two randomBytes() allocations per request at thousands of requests/s.
const buf = Buffer.alloc(24);

/** A new sampled traceparent and its trace id. */
export function newTraceparent(): { header: string; traceId: string } {
  randomFillSync(buf);
  const traceId = buf.toString('hex', 0, 16);
  return { header: `00-${traceId}-${buf.toString('hex', 16, 24)}-01`, traceId };
}

const TRACE_RESPONSE_RE = /^\s*([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})\s*$/;
const ZERO_TRACE = '0'.repeat(32);

/** The trace id and sampled flag of a `traceresponse` header; undefined when absent or malformed. */
export function parseTraceresponse(
  value: string | string[] | undefined
): { traceId: string; sampled: boolean } | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const m = TRACE_RESPONSE_RE.exec(v);
  if (!m || m[1] === 'ff' || m[2] === ZERO_TRACE) return undefined;
  return { traceId: m[2], sampled: (parseInt(m[4], 16) & 1) === 1 };
}
