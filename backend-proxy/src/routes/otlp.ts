/**
 * POST /v1/traces — the OTLP/HTTP receiver of the embedded store (JSON and protobuf, gzip accepted).
 * Parse the whole body first, then store: a malformed request is a 400 and changes nothing.
 * The receiver asks for the bearer token too when one is configured (an OTLP exporter can send headers).
 */
import express, { Router } from 'express';
import type { ProxyConfig } from '../config';
import { otlpToSpans, OtlpFormatError } from '../otlp/normalize';
import { enrichSpan } from '../store/enrich';
import { decodeOtlpProtobuf, ProtobufDecodeError } from '../store/otlp-protobuf';
import { bearerAuth } from '../http/auth';
import { errorBody } from '../http/errors';
import { otlpReceived, otlpRejected } from '../metrics';
import type { Sources } from '../sources';

export function otlpRoutes(config: ProxyConfig, sources: Sources): Router {
  const r = Router();
  const raw = express.raw({ type: () => true, limit: config.bodyLimitBytes, inflate: true });
  r.post('/traces', bearerAuth(config.token), raw, (req, res) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const isProto = type === 'application/x-protobuf' || type === 'application/protobuf';
    if (!isProto && type !== 'application/json') {
      otlpRejected.inc({ encoding: 'unknown' });
      res.status(415).json(errorBody('unsupported_media_type', `Content-Type must be application/json or application/x-protobuf, got "${type || 'none'}"`));
      return;
    }
    const encoding = isProto ? 'protobuf' : 'json';
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    try {
      const parsed = isProto ? decodeOtlpProtobuf(body) : JSON.parse(body.toString('utf8'));
      const spans = otlpToSpans(parsed);
      for (const s of spans) enrichSpan(s);
      sources.store.add(spans);
      otlpReceived.inc({ encoding }, spans.length);
      // OTLP/HTTP success: an ExportTraceServiceResponse; protobuf clients accept an empty message body.
      if (isProto) res.status(200).type('application/x-protobuf').end(Buffer.alloc(0));
      else res.status(200).json({ partialSuccess: {} });
    } catch (err) {
      otlpRejected.inc({ encoding });
      const e = err as Error;
      const why = err instanceof OtlpFormatError || err instanceof ProtobufDecodeError ? e.message : err instanceof SyntaxError ? `malformed JSON: ${e.message}` : `unreadable: ${e.message}`;
      res.status(400).json(errorBody('bad_otlp', `OTLP body rejected, nothing stored: ${why}`));
    }
  });
  return r;
}
