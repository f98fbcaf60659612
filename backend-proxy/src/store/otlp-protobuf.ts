/**
 * OTLP/HTTP protobuf (ExportTraceServiceRequest) → the OTLP JSON object shape, so one normaliser handles both,
 * decoded on protobufjs' wire reader within bounds (OTLP_PROTOBUF_LIMITS). The schema below is the subset of
 * opentelemetry-proto 1.x that traces need (field numbers from the spec): what tests encode bodies with, and the
 * field numbers the decoder reads; unknown fields (links, events, dropped counts…) are skipped.
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

/** The request message (what tests encode real protobuf bodies with). */
export const ExportTraceServiceRequest = protobuf
  .parse(PROTO, { keepCase: false })
  .root.lookupType('otlp.ExportTraceServiceRequest');

export class ProtobufDecodeError extends Error {
  override name = 'ProtobufDecodeError';
}

/**
 * What one request may hold once decoded. A protobuf element can be 2 bytes on the wire and a few hundred in memory
 * (10 MiB of empty attributes once took ~1 GB of RSS and 4 s of a blocked event loop), so decoding counts as it goes
 * and stops at the first element past a bound. The bounds sit well above what OTel exporters send (SDKs: 512 spans a
 * request; the Collector's batch: 8,192).
 */
export const OTLP_PROTOBUF_LIMITS = {
  /** Spans per request. */
  spans: 50_000,
  /** Attributes (resource, scope, span) and the values inside array and kvlist attributes, per request. */
  values: 500_000,
  /** Nesting of array/kvlist attribute values. */
  depth: 32,
};

type Obj = Record<string, unknown>;
type Limits = typeof OTLP_PROTOBUF_LIMITS;

/**
 * Decodes ExportTraceServiceRequest straight into the OTLP JSON object shape (one object per element, nothing
 * kept from the wire), within `limits`. Fields it does not need (events, links, dropped counts) are skipped unread.
 */
class BoundedDecoder {
  private spans = 0;
  private values = 0;

  constructor(
    private r: protobuf.Reader,
    private limits: Limits
  ) {}

  private fail(what: string): never {
    throw new ProtobufDecodeError(
      `too many ${what} in one request (at most ${what === 'spans' ? this.limits.spans : this.limits.values}): send smaller batches`
    );
  }

  /** Reads fields until `end`, calling `on(field, wireType)`; `on` returns false for a field it did not read. */
  private fields(end: number, on: (field: number, wire: number) => boolean): void {
    const r = this.r;
    while (r.pos < end) {
      const tag = r.uint32();
      const field = tag >>> 3;
      const wire = tag & 7;
      if (field === 0 || wire === 4) throw new ProtobufDecodeError(`invalid tag ${tag} at byte ${r.pos}`);
      if (!on(field, wire)) r.skipType(wire);
    }
    if (r.pos !== end) throw new ProtobufDecodeError(`a message overruns its length at byte ${r.pos}`);
  }

  /** The end offset of the length-delimited message that starts here. */
  private sub(): number {
    const len = this.r.uint32();
    const end = this.r.pos + len;
    if (end > this.r.len) throw new ProtobufDecodeError(`a length of ${len} bytes runs past the end of the body`);
    return end;
  }

  private hex(): string {
    return Buffer.from(this.r.bytes()).toString('hex');
  }

  private fixed64(): string {
    const r = this.r;
    if (r.pos + 8 > r.len) throw new ProtobufDecodeError('a fixed64 runs past the end of the body');
    const v = Buffer.from(r.buf.buffer, r.buf.byteOffset + r.pos, 8).readBigUInt64LE(0);
    r.pos += 8;
    return v.toString();
  }

  /** A varint as a signed 64-bit decimal string (int64: two's complement). */
  private int64(): string {
    const r = this.r;
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (r.pos >= r.len) throw new ProtobufDecodeError('a varint runs past the end of the body');
      const b = r.buf[r.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7n;
      if (shift > 63n) throw new ProtobufDecodeError('a varint is longer than 10 bytes');
    }
    return BigInt.asIntN(64, v).toString();
  }

  request(): Obj {
    const resourceSpans: Obj[] = [];
    this.fields(this.r.len, (f, w) =>
      f === 1 && w === 2 ? (resourceSpans.push(this.resourceSpans(this.sub())), true) : false
    );
    return { resourceSpans };
  }

  private resourceSpans(end: number): Obj {
    const out: Obj = {};
    const scopeSpans: Obj[] = [];
    this.fields(end, (f, w) => {
      if (w !== 2) return false;
      if (f === 1) out.resource = this.attributesOnly(this.sub(), 1);
      else if (f === 2) scopeSpans.push(this.scopeSpans(this.sub()));
      else if (f === 3) out.schemaUrl = this.r.string();
      else return false;
      return true;
    });
    out.scopeSpans = scopeSpans;
    return out;
  }

  /** Resource (attributes = 1) and the like: a message whose only field kept is its attribute list. */
  private attributesOnly(end: number, field: number): Obj {
    const attributes: Obj[] = [];
    this.fields(end, (f, w) =>
      f === field && w === 2 ? (attributes.push(this.keyValue(this.sub(), 0)), true) : false
    );
    return { attributes };
  }

  private scopeSpans(end: number): Obj {
    const out: Obj = {};
    const spans: Obj[] = [];
    this.fields(end, (f, w) => {
      if (w !== 2) return false;
      if (f === 1) out.scope = this.scope(this.sub());
      else if (f === 2) spans.push(this.span(this.sub()));
      else if (f === 3) out.schemaUrl = this.r.string();
      else return false;
      return true;
    });
    out.spans = spans;
    return out;
  }

  private scope(end: number): Obj {
    const out: Obj = {};
    const attributes: Obj[] = [];
    this.fields(end, (f, w) => {
      if (w !== 2) return false;
      if (f === 1) out.name = this.r.string();
      else if (f === 2) out.version = this.r.string();
      else if (f === 3) attributes.push(this.keyValue(this.sub(), 0));
      else return false;
      return true;
    });
    out.attributes = attributes;
    return out;
  }

  private span(end: number): Obj {
    if (++this.spans > this.limits.spans) this.fail('spans');
    const out: Obj = {};
    const attributes: Obj[] = [];
    this.fields(end, (f, w) => {
      switch (f) {
        case 1:
          if (w !== 2) return false;
          out.traceId = this.hex();
          return true;
        case 2:
          if (w !== 2) return false;
          out.spanId = this.hex();
          return true;
        case 3:
          if (w !== 2) return false;
          out.traceState = this.r.string();
          return true;
        case 4:
          if (w !== 2) return false;
          out.parentSpanId = this.hex();
          return true;
        case 5:
          if (w !== 2) return false;
          out.name = this.r.string();
          return true;
        case 6:
          if (w !== 0) return false;
          out.kind = this.r.int32();
          return true;
        case 7:
          if (w !== 1) return false;
          out.startTimeUnixNano = this.fixed64();
          return true;
        case 8:
          if (w !== 1) return false;
          out.endTimeUnixNano = this.fixed64();
          return true;
        case 9:
          if (w !== 2) return false;
          attributes.push(this.keyValue(this.sub(), 0));
          return true;
        case 15:
          if (w !== 2) return false;
          out.status = this.status(this.sub());
          return true;
        case 16:
          if (w !== 5) return false;
          out.flags = this.r.fixed32();
          return true;
        default:
          return false;
      }
    });
    out.attributes = attributes;
    return out;
  }

  private status(end: number): Obj {
    const out: Obj = {};
    this.fields(end, (f, w) => {
      if (f === 2 && w === 2) out.message = this.r.string();
      else if (f === 3 && w === 0) out.code = this.r.int32();
      else return false;
      return true;
    });
    return out;
  }

  private keyValue(end: number, depth: number): Obj {
    if (++this.values > this.limits.values) this.fail('attribute values');
    const out: Obj = {};
    this.fields(end, (f, w) => {
      if (w !== 2) return false;
      if (f === 1) out.key = this.r.string();
      else if (f === 2) out.value = this.anyValue(this.sub(), depth);
      else return false;
      return true;
    });
    return out;
  }

  private anyValue(end: number, depth: number): Obj {
    if (depth > this.limits.depth)
      throw new ProtobufDecodeError(`attribute values nest deeper than ${this.limits.depth} levels`);
    const out: Obj = {};
    this.fields(end, (f, w) => {
      switch (f) {
        case 1:
          if (w !== 2) return false;
          out.stringValue = this.r.string();
          return true;
        case 2:
          if (w !== 0) return false;
          out.boolValue = this.r.bool();
          return true;
        case 3:
          if (w !== 0) return false;
          out.intValue = this.int64();
          return true;
        case 4:
          if (w !== 1) return false;
          out.doubleValue = this.r.double();
          return true;
        case 5:
          if (w !== 2) return false;
          out.arrayValue = { values: this.arrayValues(this.sub(), depth + 1) };
          return true;
        case 6:
          if (w !== 2) return false;
          out.kvlistValue = { values: this.kvlistValues(this.sub(), depth + 1) };
          return true;
        case 7:
          if (w !== 2) return false;
          out.bytesValue = Buffer.from(this.r.bytes()).toString('base64');
          return true;
        default:
          return false;
      }
    });
    return out;
  }

  private arrayValues(end: number, depth: number): Obj[] {
    const values: Obj[] = [];
    this.fields(end, (f, w) => {
      if (f !== 1 || w !== 2) return false;
      if (++this.values > this.limits.values) this.fail('attribute values');
      values.push(this.anyValue(this.sub(), depth));
      return true;
    });
    return values;
  }

  private kvlistValues(end: number, depth: number): Obj[] {
    const values: Obj[] = [];
    this.fields(end, (f, w) => (f === 1 && w === 2 ? (values.push(this.keyValue(this.sub(), depth)), true) : false));
    return values;
  }
}

/**
 * Decodes the binary body into the OTLP JSON object shape: ids as lowercase hex, 64-bit ints as decimal strings,
 * bytes values as base64 (as OTLP JSON has them). A body past `limits`, or not an ExportTraceServiceRequest, is a
 * ProtobufDecodeError saying why.
 */
export function decodeOtlpProtobuf(buf: Uint8Array, limits: Limits = OTLP_PROTOBUF_LIMITS): unknown {
  try {
    return new BoundedDecoder(protobuf.Reader.create(buf), limits).request();
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw err;
    // protobufjs' reader throws RangeError ("index out of range") on a truncated body.
    throw new ProtobufDecodeError(`not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
  }
}
