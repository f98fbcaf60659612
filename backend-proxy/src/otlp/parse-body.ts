/**
 * An OTLP/HTTP body (JSON or protobuf) → normalised, enriched spans, or an `OtlpBodyError` saying why none. Pure: the
 * ingest service runs it in place for small bodies and in the engine's worker (services/rca-worker.ts) for large
 * ones, so parsing megabytes never holds the event loop.
 */
import type { Span } from '../../../contract';
import { assertJsonDepth } from '../domain/json-depth';
import { enrichSpan } from '../store/enrich';
import { decodeOtlpProtobuf, ProtobufDecodeError } from '../store/otlp-protobuf';
import { otlpToSpans, OtlpFormatError } from './normalize';

export type OtlpEncoding = 'json' | 'protobuf';

export class OtlpBodyError extends Error {}

/** An OTLP JSON body nested past MAX_JSON_DEPTH (protobuf's nesting is bounded while decoding). */
export function assertOtlpDepth(body: Uint8Array, encoding: OtlpEncoding): void {
  if (encoding === 'json') assertJsonDepth(body, 'the OTLP JSON body');
}

export function parseOtlpBody(body: Buffer | Uint8Array, encoding: OtlpEncoding): Span[] {
  try {
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const spans = otlpToSpans(encoding === 'protobuf' ? decodeOtlpProtobuf(buf) : JSON.parse(buf.toString('utf8')));
    for (const s of spans) enrichSpan(s);
    return spans;
  } catch (err) {
    const e = err as Error;
    throw new OtlpBodyError(
      err instanceof OtlpFormatError || err instanceof ProtobufDecodeError
        ? e.message
        : err instanceof SyntaxError
          ? `malformed JSON: ${e.message}`
          : `unreadable: ${e.message}`
    );
  }
}
