/**
 * What the runs service refuses, typed so the routes map each to a status without parsing messages:
 * invalid → 400, not_found → 404, conflict → 409 (a reused run id, a worker of an ended run…),
 * too_large → 413, unavailable → 503 with Retry-After (the database is down: nothing is lost, retry the call;
 * every call is idempotent, so a retry after a lost answer applies it once).
 */
export type RunsErrorCode = 'invalid' | 'not_found' | 'conflict' | 'too_large' | 'unavailable';

const STATUS: Record<RunsErrorCode, number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unavailable: 503,
};

export class RunsError extends Error {
  override name = 'RunsError';
  readonly httpStatus: number;
  constructor(
    public readonly code: RunsErrorCode,
    message: string,
    public readonly retryAfterS?: number
  ) {
    super(message);
    this.httpStatus = STATUS[code];
  }
}
