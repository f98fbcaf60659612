/**
 * POST /v1/traces — the OTLP/HTTP receiver of the embedded store (JSON and protobuf, gzip accepted). The receiver
 * asks for a token of the ingest scope too when any token is configured (an OTLP exporter can send headers).
 */
import express, { Router, type RequestHandler } from 'express';
import type { ProxyConfig } from '../config';
import { tokensOf } from '../config';
import { scopedAuth } from '../http/scopes';
import type { IngestService } from '../services/ingest';

/** `budget`: the proxy's back-pressure on bodies (http/backpressure.ts): past it, 503 with Retry-After, as OTLP/HTTP expects. */
export function otlpRoutes(
  config: Pick<ProxyConfig, 'token' | 'readToken' | 'ingestToken' | 'adminToken' | 'bodyLimitBytes'>,
  ingest: IngestService,
  budget: RequestHandler = (_q, _s, next) => next()
): Router {
  const r = Router();
  const raw = express.raw({ type: () => true, limit: config.bodyLimitBytes, inflate: true });
  r.post('/traces', scopedAuth(tokensOf(config)), budget, raw, async (req, res) => {
    const encoding = ingest.encodingOf(req.headers['content-type']);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    // Protobuf nesting is bounded while decoding (store/otlp-protobuf.ts); JSON's before it is parsed (in the service).
    await ingest.ingest(body, encoding);
    // OTLP/HTTP success: an ExportTraceServiceResponse; protobuf clients accept an empty message body.
    if (encoding === 'protobuf') res.status(200).type('application/x-protobuf').end(Buffer.alloc(0));
    else res.status(200).json({ partialSuccess: {} });
  });
  return r;
}
