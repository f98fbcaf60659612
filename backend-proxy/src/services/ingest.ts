/**
 * OTLP/HTTP ingest into the embedded store (JSON and protobuf): the whole body is parsed first, then stored, so a
 * malformed request changes nothing. Spans are enriched with GenAI attributes on the way in. A JSON body past
 * OFFLOAD_BYTES is parsed in the engine's worker pool (./rca-pool.ts), so megabytes of JSON never hold the event loop.
 */
import { DomainError } from '../domain/errors';
import { otlpReceived, otlpRejected } from '../metrics';
import { assertOtlpDepth, OtlpBodyError, parseOtlpBody, type OtlpEncoding } from '../otlp/parse-body';
import type { Span } from '../../../contract';
import type { TraceStore } from '../store/trace-store';
import type { RcaPool } from './rca-pool';

/** Bodies up to this size are parsed in place (a few milliseconds); larger ones in a worker. */
export const OFFLOAD_BYTES = 256 * 1024;

export class IngestService {
  constructor(
    private store: TraceStore,
    private pool?: Pick<RcaPool, 'parseOtlp'>
  ) {}

  /** The encoding of a Content-Type, or a 415 naming what is accepted. */
  encodingOf(contentType: string | undefined): OtlpEncoding {
    const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
    if (type === 'application/json') return 'json';
    otlpRejected.inc({ encoding: 'unknown' });
    throw new DomainError(
      'unsupported',
      `Content-Type must be application/json or application/x-protobuf, got "${type || 'none'}"`
    );
  }

  /** Stores every span of the body or none (a 400 saying why); returns how many were stored. */
  async ingest(body: Buffer, encoding: OtlpEncoding): Promise<number> {
    // JSON only: the protobuf decoder stops at its bounds (store/otlp-protobuf.ts) before a flood costs seconds.
    const offload = this.pool && encoding === 'json' && body.length > OFFLOAD_BYTES;
    if (!offload) assertOtlpDepth(body, encoding);
    let chunks: Span[][];
    try {
      chunks = offload ? await this.pool!.parseOtlp(body, encoding) : [parseOtlpBody(body, encoding)];
    } catch (err) {
      if (!(err instanceof OtlpBodyError)) throw err;
      otlpRejected.inc({ encoding });
      throw new DomainError('invalid', `OTLP body rejected, nothing stored: ${err.message}`, { code: 'bad_otlp' });
    }
    // Every span parsed before any is stored; a large body is stored a chunk per turn of the event loop.
    let n = 0;
    for (let i = 0; i < chunks.length; i++) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      this.store.add(chunks[i]);
      n += chunks[i].length;
    }
    otlpReceived.inc({ encoding }, n);
    return n;
  }
}
