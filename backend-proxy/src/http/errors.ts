/**
 * Errors as `{error: {code, message}}` JSON, thrown by routes (HttpError) or raised by the services below as domain
 * errors (../domain/errors.ts, mapped here by kind), and turned into responses in one place.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, type DomainErrorKind } from '../domain/errors';

export class HttpError extends Error {
  /** Headers the answer carries (Retry-After on 503). */
  headers?: Record<string, string>;
  constructor(
    public status: number,
    public code: string,
    message: string,
    public details?: unknown
  ) {
    super(message);
  }
}

export const badRequest = (message: string, details?: unknown): HttpError =>
  new HttpError(400, 'bad_request', message, details);
export const notFound = (message: string): HttpError => new HttpError(404, 'not_found', message);
export const notImplemented = (message: string): HttpError => new HttpError(501, 'not_implemented', message);

const STATUS: Record<DomainErrorKind, number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported: 415,
  not_implemented: 501,
  upstream: 502,
  unavailable: 503,
  busy: 503,
};

const CODE: Record<DomainErrorKind, string> = {
  invalid: 'bad_request',
  not_found: 'not_found',
  conflict: 'conflict',
  too_large: 'payload_too_large',
  unsupported: 'unsupported_media_type',
  not_implemented: 'not_implemented',
  upstream: 'source_unavailable',
  unavailable: 'unavailable',
  busy: 'overloaded',
};

/** A service's refusal as its HTTP answer: the kind's status, its code (or the error's own), Retry-After when given. */
export function httpErrorOf(e: DomainError): HttpError {
  const h = new HttpError(STATUS[e.kind], e.code ?? CODE[e.kind], e.message, e.details);
  if (e.retryAfterS !== undefined) h.headers = { 'Retry-After': String(Math.max(1, Math.ceil(e.retryAfterS))) };
  return h;
}

export function errorBody(
  code: string,
  message: string,
  details?: unknown
): { error: { code: string; message: string; details?: unknown } } {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json(errorBody('not_found', `no route for ${req.method} ${req.path}`));
};

export const errorHandler: ErrorRequestHandler = (raw, req, res, _next) => {
  if (res.headersSent) return;
  const err: unknown = raw instanceof DomainError ? httpErrorOf(raw) : raw;
  if (err instanceof HttpError) {
    if (err.headers) res.set(err.headers);
    res.status(err.status).json(errorBody(err.code, err.message, err.details));
    return;
  }
  // body-parser / raw-body errors carry `type` and `status`.
  const e = err as { type?: string; status?: number; message?: string; limit?: number };
  if (e.type === 'entity.too.large') {
    // The limit holds for the decoded body: a gzip body that inflates past it stops there (no zip bomb in memory).
    const limit =
      typeof e.limit === 'number'
        ? `${e.limit} bytes, after decoding any Content-Encoding; HOPSCOPE_PROXY_BODY_LIMIT`
        : (e.message ?? '');
    res.status(413).json(errorBody('payload_too_large', `request body exceeds the limit (${limit})`));
    return;
  }
  if (e.type === 'encoding.unsupported') {
    res
      .status(415)
      .json(
        errorBody(
          'unsupported_media_type',
          `${e.message ?? 'unsupported content encoding'}: send identity, gzip, deflate or br`
        )
      );
    return;
  }
  if (e.type === 'entity.parse.failed') {
    res.status(400).json(errorBody('bad_request', `malformed JSON body: ${e.message ?? ''}`));
    return;
  }
  // PostgreSQL's (and PGlite's) class 22, data exception: a value of the request the database cannot hold
  // (a number beyond bigint, a date beyond its range). The request is at fault, not the proxy.
  const code = (err as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /^22[0-9A-Z]{3}$/.test(code) &&
    typeof (err as { severity?: unknown }).severity === 'string'
  ) {
    res.status(400).json(errorBody('bad_request', `a value of the request is out of range: ${e.message ?? code}`));
    return;
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    res.status(e.status).json(errorBody('bad_request', e.message ?? 'bad request'));
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  res.status(500).json(errorBody('internal', 'internal error; see the proxy log'));
};

declare module 'express-serve-static-core' {
  interface Request {
    log?: import('pino').Logger;
  }
}
