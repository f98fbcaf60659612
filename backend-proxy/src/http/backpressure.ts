/**
 * Back-pressure on request bodies: the bytes of the bodies being received and handled at once are bounded, so a
 * burst of large OTLP exports or root-cause uploads cannot hold the proxy's memory hostage. A body that would go
 * past the bound is refused before it is read: 503 with Retry-After, which OTLP/HTTP exporters (and the load
 * generator) retry after the given delay. One body is always admitted, however large (the body limit still holds).
 */
import type { RequestHandler } from 'express';
import { errorBody } from './errors';

export interface BodyBudget {
  handler: RequestHandler;
  /** Bytes admitted and not yet answered. */
  inFlight(): number;
}

/**
 * `maxInFlightBytes` of bodies at once. A body's cost is its Content-Length; a compressed or chunked one costs
 * `bodyLimitBytes` (what it may decode to).
 */
export function bodyBudget(maxInFlightBytes: number, bodyLimitBytes: number, retryAfterS = 1): BodyBudget {
  let inFlight = 0;
  const handler: RequestHandler = (req, res, next) => {
    const length = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && (length === undefined || length === '0')) return next();
    const encoded = (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
    const n = Number(length);
    const cost = chunked || encoded || !Number.isFinite(n) ? bodyLimitBytes : Math.min(n, bodyLimitBytes);
    if (inFlight > 0 && inFlight + cost > maxInFlightBytes) {
      // The unread body is not drained: the connection closes with the answer.
      res.setHeader('Retry-After', String(retryAfterS));
      res.setHeader('Connection', 'close');
      res
        .status(503)
        .json(
          errorBody(
            'overloaded',
            `the proxy is receiving ${Math.round(inFlight / 1048576)} MiB of request bodies already (at most ${Math.round(maxInFlightBytes / 1048576)} MiB at once); retry after ${retryAfterS} s`
          )
        );
      return;
    }
    inFlight += cost;
    let released = false;
    res.once('close', () => {
      if (!released) {
        released = true;
        inFlight -= cost;
      }
    });
    next();
  };
  return { handler, inFlight: () => inFlight };
}
