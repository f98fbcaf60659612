/**
 * W3C Trace Context on the client side: the `traceparent` the driver may send, and the Level 2 `traceresponse` a
 * server may answer (`00-<trace-id>-<span-id>-<flags>`), so every request knows its trace id — or says it has none.
 */
import { randomFillSync } from 'node:crypto';

export type TraceIdSource = 'sent' | 'traceresponse' | 'none';

// One buffer refilled per id: cheaper than two randomBytes() allocations per request at thousands of requests/s.
const buf = Buffer.alloc(24);

/** Fraction in [0, 1) from the low 8 hex digits of a trace id (the chain's samplers decide on the same digits). */
function idFraction(traceId: string): number {
  return parseInt(traceId.slice(-8), 16) / 0x1_0000_0000;
}

/**
 * A new traceparent and its trace id: sampled (flags 01) when the id's fraction is below `sampleRatio` (1: always,
 * 0: never), as a trace-id ratio sampler decides, so a parent-based chain keeps that share of the run's traces whole.
 */
export function newTraceparent(sampleRatio = 1): { header: string; traceId: string; sampled: boolean } {
  randomFillSync(buf);
  const traceId = buf.toString('hex', 0, 16);
  const sampled = sampleRatio >= 1 || idFraction(traceId) < sampleRatio;
  return { header: `00-${traceId}-${buf.toString('hex', 16, 24)}-${sampled ? '01' : '00'}`, traceId, sampled };
}

/** Past this rate the default share of sampled traceparents is TRACE_ALL_UP_TO_RPS / the peak rate. */
export const TRACE_ALL_UP_TO_RPS = 200;

/** The default `--trace-sample`: every request up to 200 req/s, above it 200 / peak (about 200 sampled traces/s). */
export function defaultTraceSample(peakRps: number): number {
  return peakRps <= TRACE_ALL_UP_TO_RPS ? 1 : TRACE_ALL_UP_TO_RPS / peakRps;
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
