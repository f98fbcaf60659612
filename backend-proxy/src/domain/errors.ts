/**
 * What the proxy's services refuse, by kind, below the HTTP layer: the services raise these, the HTTP error handler
 * (../http/errors.ts) maps each kind to its status — invalid 400, not_found 404, conflict 409, too_large 413,
 * unsupported 415 (a media type the service does not read), not_implemented 501, upstream 502 (a source failed), unavailable 503 (the database is down, the proxy is stopping),
 * busy 503 (saturated: retry after `retryAfterS`). `code` is the answer's error code where the kind's own is not
 * precise enough (`bad_otlp`, `database_unavailable`, `render_failed`…); `details` travel in the answer as they are;
 * `retryAfterS` becomes Retry-After.
 */
export type DomainErrorKind =
  | 'invalid'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'unsupported'
  | 'not_implemented'
  | 'upstream'
  | 'unavailable'
  | 'busy';

export interface DomainErrorOptions {
  /** The answer's error code, when not the kind's own. */
  code?: string;
  details?: unknown;
  /** When to retry (seconds): unavailable or busy. */
  retryAfterS?: number;
}

export class DomainError extends Error {
  override name = 'DomainError';
  readonly code?: string;
  readonly details?: unknown;
  readonly retryAfterS?: number;
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    options: DomainErrorOptions = {}
  ) {
    super(message);
    this.code = options.code;
    this.details = options.details;
    this.retryAfterS = options.retryAfterS;
  }
}

export const invalid = (message: string, details?: unknown): DomainError =>
  new DomainError('invalid', message, { details });
export const notFound = (message: string): DomainError => new DomainError('not_found', message);
export const notImplemented = (message: string): DomainError => new DomainError('not_implemented', message);
/** A source failed (502 `source_unavailable` unless `code` says otherwise). */
export const upstream = (message: string, code?: string): DomainError => new DomainError('upstream', message, { code });
/** Saturated: a client should retry after `retryAfterS` (503 `overloaded` with Retry-After). */
export const busy = (message: string, retryAfterS = 1): DomainError =>
  new DomainError('busy', message, { code: 'overloaded', retryAfterS });
/** The proxy is stopping: what waited or ran is refused (503 `stopping`). */
export const stopping = (): DomainError =>
  new DomainError('unavailable', 'the proxy is stopping', { code: 'stopping' });
/** The database is down: nothing is lost, retry (503 `database_unavailable` with Retry-After). */
export const databaseUnavailable = (message: string, retryAfterS: number): DomainError =>
  new DomainError('unavailable', message, { code: 'database_unavailable', details: { retryAfterS }, retryAfterS });
