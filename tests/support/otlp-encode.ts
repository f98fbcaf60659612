/**
 * OTLP bodies for tests: normalised spans → OTLP/HTTP JSON (ExportTraceServiceRequest, hex ids, string nanos),
 * grouped by resource (the inverse of the proxy's `otlpToSpans` for everything the contract keeps), and OTLP JSON →
 * a real protobuf body.
 */
import type { Span } from '../../contract';
import { ExportTraceServiceRequest } from '../../backend-proxy/src/store/otlp-protobuf';

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
const KIND: Record<Span['kind'], number> = {
  unspecified: 0,
  internal: 1,
  server: 2,
  client: 3,
  producer: 4,
  consumer: 5,
};
const STATUS: Record<Span['status'], number> = { unset: 0, ok: 1, error: 2, timeout: 2 };

function value(v: string | number | boolean): AnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}
const attrs = (r: Record<string, string | number | boolean>): Array<{ key: string; value: AnyValue }> =>
  Object.keys(r).map((key) => ({ key, value: value(r[key]) }));
/** ms (float) → integer nanoseconds as a decimal string, exact to the microsecond. */
const nanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

export function spansToOtlp(spans: Span[]): { resourceSpans: unknown[] } {
  const byResource = new Map<string, { resource: Span['resource']; spans: Span[] }>();
  for (const s of spans) {
    const k = JSON.stringify(s.resource);
    let g = byResource.get(k);
    if (!g) byResource.set(k, (g = { resource: s.resource, spans: [] }));
    g.spans.push(s);
  }
  return {
    resourceSpans: [...byResource.values()].map((g) => ({
      resource: { attributes: attrs(g.resource) },
      scopeSpans: [
        {
          scope: { name: 'hopscope' },
          spans: g.spans.map((s) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            kind: KIND[s.kind],
            startTimeUnixNano: nanos(s.startMs),
            endTimeUnixNano: nanos(s.endMs),
            attributes: attrs(
              s.status === 'timeout' && s.attributes['error.type'] === undefined
                ? { ...s.attributes, 'error.type': 'timeout' }
                : s.attributes
            ),
            status: { code: STATUS[s.status], ...(s.statusMessage ? { message: s.statusMessage } : {}) },
          })),
        },
      ],
    })),
  };
}

/** OTLP JSON-shaped input → protobuf bytes (hex ids become bytes), as an OTLP/HTTP protobuf exporter sends them. */
export function encodeOtlpProtobuf(json: unknown): Uint8Array {
  const clone = JSON.parse(JSON.stringify(json)) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  for (const rs of clone.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        for (const k of ['traceId', 'spanId', 'parentSpanId'] as const) {
          if (typeof s[k] === 'string') s[k] = Buffer.from(s[k] as string, 'hex');
        }
      }
    }
  }
  return ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(clone)).finish();
}
