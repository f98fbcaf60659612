/**
 * OTLP/HTTP protobuf (ExportTraceServiceRequest) → the OTLP JSON object shape, so one normaliser handles both.
 * The schema below is the subset of opentelemetry-proto 1.x that traces need (field numbers from the spec);
 * unknown fields (links, events, dropped counts…) are skipped by protobufjs.
 */
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

/** The request message (also what tests encode real protobuf bodies with). */
export const ExportTraceServiceRequest = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest');

export class ProtobufDecodeError extends Error {
  override name = 'ProtobufDecodeError';
}

/** Decodes the binary body; ids come out as lowercase hex, 64-bit ints as decimal strings (as OTLP JSON has them). */
export function decodeOtlpProtobuf(buf: Uint8Array): unknown {
  let msg: protobuf.Message;
  try {
    msg = ExportTraceServiceRequest.decode(buf);
  } catch (err) {
    throw new ProtobufDecodeError(`not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
  }
  const obj = ExportTraceServiceRequest.toObject(msg, { longs: String, bytes: String, defaults: false, arrays: true, oneofs: false }) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  // protobufjs renders bytes as base64; the OTLP JSON spec (and our normaliser's fast path) wants hex.
  for (const rs of obj.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        for (const k of ['traceId', 'spanId', 'parentSpanId'] as const) {
          if (typeof s[k] === 'string') s[k] = Buffer.from(s[k] as string, 'base64').toString('hex');
        }
      }
    }
  }
  return obj;
}
