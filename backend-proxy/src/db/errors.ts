/**
 * The database's own errors, typed so callers can answer well: `unavailable` (connection lost, server down or
 * overloaded: retry later; the service maps it to 503 + Retry-After), `locked` (the embedded data dir belongs to
 * another running proxy) and `schema` (migrations cannot run). Anything else is a bug and stays what it was.
 */

export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  readonly code = 'unavailable';
  constructor(
    message: string,
    public readonly retryAfterS = 2
  ) {
    super(message);
  }
}

export class DatabaseLockedError extends Error {
  override name = 'DatabaseLockedError';
  readonly code = 'locked';
}

export class DatabaseSchemaError extends Error {
  override name = 'DatabaseSchemaError';
  readonly code = 'schema';
}

/** Socket-level failures that mean "could not talk to the server", not "the server said no". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * SQLSTATEs that are the server's state, not the statement's fault: connection exceptions (08…), shutting down
 * (57P01-57P03), too many connections, statement timeout / cancelled (57014), out of resources (53…),
 * serialization failure and deadlock (40001, 40P01: the whole call can simply be retried).
 */
function isUnavailableSqlState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code.startsWith('53') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '57014' ||
    code === '40001' ||
    code === '40P01'
  );
}

/** True when `err` says the database cannot be reached or cannot serve now (retry later). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code) || (code.length === 5 && isUnavailableSqlState(code))) return true;
  const msg = typeof e.message === 'string' ? e.message : '';
  // node-postgres reports these without a code.
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    msg
  );
}

/** Wraps an unavailable-kind error into DatabaseUnavailableError (with `what` for context); others pass through. */
export function classify(err: unknown, what: string): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  if (isUnavailable(err)) {
    const e = err as { code?: string; message?: string };
    const detail = [e.code, e.message].filter(Boolean).join(': ') || String(err);
    return new DatabaseUnavailableError(`${what} is unavailable (${detail})`);
  }
  return err;
}
