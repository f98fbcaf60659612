/**
 * OTLP/HTTP ingest into the embedded store (JSON and protobuf): the whole body is parsed first, then stored, so a
 * malformed request changes nothing. Spans are enriched with GenAI attributes on the way in.
 */
import { HttpError } from '../http/errors';
import { otlpReceived, otlpRejected } from '../metrics';
import { otlpToSpans, OtlpFormatError } from '../otlp/normalize';
import { enrichSpan } from '../store/enrich';
import { decodeOtlpProtobuf, ProtobufDecodeError } from '../store/otlp-protobuf';
import type { TraceStore } from '../store/trace-store';

type OtlpEncoding = 'json' | 'protobuf';

export class IngestService {
  constructor(private store: TraceStore) {}

  /** The encoding of a Content-Type, or a 415 naming what is accepted. */
  encodingOf(contentType: string | undefined): OtlpEncoding {
    const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
    if (type === 'application/json') return 'json';
    otlpRejected.inc({ encoding: 'unknown' });
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be application/json or application/x-protobuf, got "${type || 'none'}"`
    );
  }

  /** Stores every span of the body or none (a 400 saying why); returns how many were stored. */
  ingest(body: Buffer, encoding: OtlpEncoding): number {
    try {
      const spans = otlpToSpans(encoding === 'protobuf' ? decodeOtlpProtobuf(body) : JSON.parse(body.toString('utf8')));
      for (const s of spans) enrichSpan(s);
      this.store.add(spans);
      otlpReceived.inc({ encoding }, spans.length);
      return spans.length;
    } catch (err) {
      otlpRejected.inc({ encoding });
      const e = err as Error;
      const why =
        err instanceof OtlpFormatError || err instanceof ProtobufDecodeError
          ? e.message
          : err instanceof SyntaxError
            ? `malformed JSON: ${e.message}`
            : `unreadable: ${e.message}`;
      throw new HttpError(400, 'bad_otlp', `OTLP body rejected, nothing stored: ${why}`);
    }
  }
}
