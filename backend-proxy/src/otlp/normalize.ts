/**
 * OTLP JSON (ExportTraceServiceRequest), Tempo v1 (`batches`) and Tempo v2 (`{trace: {resourceSpans}}`) bodies →
 * the contract's normalised `Span[]` (lowercase hex ids, epoch-ms floats, flat attribute records).
 * Pure and synchronous; every malformed shape throws an `OtlpFormatError` naming the JSON path at fault.
 */
import { declaredKindOfSpan, type Span, spanKindOf, type TraceStatus } from '../../../contract';

export class OtlpFormatError extends Error {
  readonly code = 'bad_otlp';
  constructor(
    message: string,
    /** JSON path of the offending value, e.g. `resourceSpans[0].scopeSpans[1].spans[3].traceId`. */
    readonly path: string
  ) {
    super(`${path ? `${path}: ` : ''}${message}`);
    this.name = 'OtlpFormatError';
  }
}

type Scalar = string | number | boolean;
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * An id as lowercase hex of `bytes` bytes. Hex is what the OTLP/HTTP JSON spec mandates; Tempo's trace-by-id answers
 * in base64 (jsonpb `bytes`). Padded base64 always contains `=`, and unpadded base64 of 8/16 bytes has 11/22 chars, so
 * an all-hex string is read as hex (left-padded: Tempo search strips leading zeros).
 */
function normalizeId(raw: unknown, bytes: 8 | 16, path: string): string {
  if (typeof raw !== 'string') throw new OtlpFormatError(`expected an id string, got ${describe(raw)}`, path);
  const hexLen = bytes * 2;
  if (HEX.test(raw) && raw.length <= hexLen) return raw.toLowerCase().padStart(hexLen, '0');
  if (BASE64.test(raw)) {
    const buf = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === bytes) return buf.toString('hex');
    throw new OtlpFormatError(`base64 id decodes to ${buf.length} bytes, expected ${bytes}`, path);
  }
  throw new OtlpFormatError(`not a hex or base64 id: ${JSON.stringify(raw.slice(0, 40))}`, path);
}

/** Unix nanoseconds (string, as jsonpb writes 64-bit ints, or number) → epoch milliseconds (float, µs precision). */
function nanosToMs(raw: unknown, path: string): number {
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw) || raw < 0) throw new OtlpFormatError(`invalid nanosecond time ${raw}`, path);
    return raw / 1e6;
  }
  if (typeof raw === 'string' && /^\d{1,20}$/.test(raw)) {
    const ns = BigInt(raw);
    return Number(ns / 1000n) / 1000;
  }
  throw new OtlpFormatError(`expected unix nanoseconds as a decimal string or number, got ${describe(raw)}`, path);
}

/** One OTLP AnyValue → a JSON-compatible value (arrays and kvlists kept structured; bytes as base64). */
function anyValue(v: unknown, path: string): unknown {
  if (!isObj(v)) throw new OtlpFormatError(`expected an AnyValue object, got ${describe(v)}`, path);
  if ('stringValue' in v) return String(v.stringValue);
  if ('boolValue' in v) return v.boolValue === true || v.boolValue === 'true';
  if ('intValue' in v) {
    const n = Number(v.intValue);
    if (!Number.isFinite(n)) throw new OtlpFormatError(`intValue is not an integer: ${describe(v.intValue)}`, path);
    // Beyond 2^53 a number would silently change the value; keep the exact decimal string instead.
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if ('doubleValue' in v) {
    const n = Number(v.doubleValue); // jsonpb writes NaN/Infinity as strings
    return Number.isNaN(n) && v.doubleValue !== 'NaN' ? String(v.doubleValue) : n;
  }
  if ('bytesValue' in v) return String(v.bytesValue);
  if ('arrayValue' in v) {
    const values = isObj(v.arrayValue) ? v.arrayValue.values : undefined;
    if (values !== undefined && !Array.isArray(values))
      throw new OtlpFormatError('arrayValue.values is not an array', path);
    return (values ?? []).map((x, i) => anyValue(x, `${path}.arrayValue.values[${i}]`));
  }
  if ('kvlistValue' in v) {
    const values = isObj(v.kvlistValue) ? v.kvlistValue.values : undefined;
    if (values !== undefined && !Array.isArray(values))
      throw new OtlpFormatError('kvlistValue.values is not an array', path);
    const out: Obj = {};
    (values ?? []).forEach((kv, i) => {
      if (!isObj(kv) || typeof kv.key !== 'string')
        throw new OtlpFormatError('expected {key, value}', `${path}.kvlistValue.values[${i}]`);
      out[kv.key] = kv.value === undefined ? null : anyValue(kv.value, `${path}.kvlistValue.values[${i}].value`);
    });
    return out;
  }
  return null; // an empty AnyValue is legal OTLP (value unset)
}

/** KeyValue[] → flat record; structured values (arrays, kvlists) become their JSON text, as the contract wants scalars. */
function attributesToRecord(list: unknown, path: string): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new OtlpFormatError(`expected an attribute array, got ${describe(list)}`, path);
  list.forEach((kv, i) => {
    const p = `${path}[${i}]`;
    if (!isObj(kv) || typeof kv.key !== 'string') throw new OtlpFormatError('expected {key, value}', p);
    if (kv.value === undefined || kv.value === null) return;
    const v = anyValue(kv.value, `${p}.value`);
    if (v === null) return;
    out[kv.key] = typeof v === 'object' ? JSON.stringify(v) : (v as Scalar);
  });
  return out;
}

/**
 * OTLP's kind (enum number or name), as converters write it too: Zipkin's `CLIENT`/`SERVER`/…, absent or
 * `SPAN_KIND_UNSPECIFIED` for a Zipkin span without kind. When it says nothing, the Jaeger/OpenTracing `span.kind`
 * tag some conversions keep as an attribute decides (`declaredKindOfSpan`); still nothing: `unspecified`, and the
 * root-cause engine infers the span's role from the tree.
 */
function spanKind(raw: unknown, attrs: Record<string, Scalar>, path: string): Span['kind'] {
  const k = raw === undefined || raw === null ? 'unspecified' : spanKindOf(raw);
  if (k === undefined) throw new OtlpFormatError(`unknown span kind ${describe(raw)}`, path);
  return declaredKindOfSpan({ kind: k, attributes: attrs });
}

const TIMEOUT_RE = /time[d\s_-]*out|deadline[\s_-]*exceeded|\b504\b/i;

/** OTLP status (+ the span's attributes) → the contract's status; a timeout is an error that says it timed out. */
function spanStatus(
  raw: unknown,
  attrs: Record<string, Scalar>,
  path: string
): { status: TraceStatus; message?: string } {
  if (raw !== undefined && raw !== null && !isObj(raw))
    throw new OtlpFormatError(`expected a status object, got ${describe(raw)}`, path);
  const code = raw?.code;
  const message = typeof raw?.message === 'string' && raw.message ? raw.message : undefined;
  let status: TraceStatus = 'unset';
  if (code === 2 || code === 'STATUS_CODE_ERROR' || code === 'ERROR') status = 'error';
  else if (code === 1 || code === 'STATUS_CODE_OK' || code === 'OK') status = 'ok';
  else if (code !== undefined && code !== 0 && code !== 'STATUS_CODE_UNSET' && code !== 'UNSET') {
    throw new OtlpFormatError(`unknown status code ${describe(code)}`, `${path}.code`);
  }
  const timedOut =
    attrs['hopscope.timeout'] === true ||
    (typeof attrs['error.type'] === 'string' && TIMEOUT_RE.test(attrs['error.type'])) ||
    (status === 'error' && message !== undefined && TIMEOUT_RE.test(message));
  if (timedOut) status = 'timeout';
  return { status, message };
}

function convertSpan(s: unknown, resource: Record<string, Scalar>, scope: Obj | undefined, path: string): Span {
  if (!isObj(s)) throw new OtlpFormatError(`expected a span object, got ${describe(s)}`, path);
  const traceId = normalizeId(s.traceId, 16, `${path}.traceId`);
  const spanId = normalizeId(s.spanId, 8, `${path}.spanId`);
  const parentSpanId =
    s.parentSpanId === undefined || s.parentSpanId === null || s.parentSpanId === ''
      ? undefined
      : normalizeId(s.parentSpanId, 8, `${path}.parentSpanId`);
  if (typeof s.name !== 'string')
    throw new OtlpFormatError(`span name must be a string, got ${describe(s.name)}`, `${path}.name`);
  const startMs = nanosToMs(s.startTimeUnixNano, `${path}.startTimeUnixNano`);
  const endMs = s.endTimeUnixNano === undefined ? startMs : nanosToMs(s.endTimeUnixNano, `${path}.endTimeUnixNano`);
  const attributes = attributesToRecord(s.attributes, `${path}.attributes`);
  if (scope && typeof scope.name === 'string' && scope.name && attributes['otel.scope.name'] === undefined) {
    attributes['otel.scope.name'] = scope.name;
  }
  const { status, message } = spanStatus(s.status, attributes, `${path}.status`);
  const span: Span = {
    traceId,
    spanId,
    name: s.name,
    service:
      typeof resource['service.name'] === 'string' && resource['service.name']
        ? resource['service.name']
        : 'unknown_service',
    kind: spanKind(s.kind, attributes, `${path}.kind`),
    startMs,
    // A span ending before it starts is a clock bug in the producer; keep it, but never negative.
    endMs: Math.max(startMs, endMs),
    status,
    attributes,
    resource,
  };
  if (parentSpanId !== undefined && parentSpanId !== '0000000000000000') span.parentSpanId = parentSpanId;
  if (message !== undefined) span.statusMessage = message;
  return span;
}

function convertResourceSpans(list: unknown, path: string, out: Span[]): void {
  if (!Array.isArray(list)) throw new OtlpFormatError(`expected an array, got ${describe(list)}`, path);
  list.forEach((rs, i) => {
    const rp = `${path}[${i}]`;
    if (!isObj(rs)) throw new OtlpFormatError(`expected a ResourceSpans object, got ${describe(rs)}`, rp);
    const resource = attributesToRecord(
      isObj(rs.resource) ? rs.resource.attributes : undefined,
      `${rp}.resource.attributes`
    );
    // `instrumentationLibrarySpans` is the pre-1.0 OTLP name, still served by old Tempo versions.
    const key = 'scopeSpans' in rs ? 'scopeSpans' : 'instrumentationLibrarySpans';
    const scopes = rs[key] ?? [];
    if (!Array.isArray(scopes)) throw new OtlpFormatError(`expected an array, got ${describe(scopes)}`, `${rp}.${key}`);
    scopes.forEach((ss, j) => {
      const sp = `${rp}.${key}[${j}]`;
      if (!isObj(ss)) throw new OtlpFormatError(`expected a ScopeSpans object, got ${describe(ss)}`, sp);
      const scope = isObj(ss.scope)
        ? ss.scope
        : isObj(ss.instrumentationLibrary)
          ? ss.instrumentationLibrary
          : undefined;
      const spans = ss.spans ?? [];
      if (!Array.isArray(spans)) throw new OtlpFormatError(`expected an array, got ${describe(spans)}`, `${sp}.spans`);
      spans.forEach((s, k) => out.push(convertSpan(s, resource, scope, `${sp}.spans[${k}]`)));
    });
  });
}

function convertBody(body: unknown, path: string, out: Span[]): void {
  if (Array.isArray(body)) {
    body.forEach((b, i) => convertBody(b, `${path}[${i}]`, out));
    return;
  }
  if (!isObj(body)) throw new OtlpFormatError(`expected an OTLP JSON object, got ${describe(body)}`, path || '$');
  const p = (k: string): string => (path ? `${path}.${k}` : k);
  if ('resourceSpans' in body) return convertResourceSpans(body.resourceSpans ?? [], p('resourceSpans'), out);
  if ('batches' in body) return convertResourceSpans(body.batches ?? [], p('batches'), out);
  if ('trace' in body) {
    // Tempo v2 trace-by-id; an empty `trace: {}` is a trace with no spans (yet).
    if (body.trace === null || (isObj(body.trace) && Object.keys(body.trace).length === 0)) return;
    return convertBody(body.trace, p('trace'), out);
  }
  throw new OtlpFormatError(
    'no `resourceSpans`, `batches` or `trace` key: not OTLP JSON or a Tempo trace',
    path || '$'
  );
}

/** Every span of an OTLP JSON / Tempo v1 / Tempo v2 body (or an array of them), in document order. */
export function otlpToSpans(body: unknown): Span[] {
  const out: Span[] = [];
  convertBody(body, '', out);
  return out;
}

/** Tempo v2 says `status: "PARTIAL"` when some blocks could not be read: the trace may be missing spans. */
export function tempoPartial(body: unknown): { partial: boolean; message?: string } {
  if (isObj(body) && body.status === 'PARTIAL') {
    return { partial: true, message: typeof body.message === 'string' ? body.message : undefined };
  }
  return { partial: false };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}
