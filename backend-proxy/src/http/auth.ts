/** Bearer-token check on /api when a token is configured; constant-time compare so the token cannot be guessed byte by byte. */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { errorBody } from './errors';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function bearerAuth(token: string | undefined): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const want = digest(token);
  return (req, res, next) => {
    const h = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(h);
    if (m && timingSafeEqual(digest(m[1].trim()), want)) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="hopscope"');
    res
      .status(401)
      .json(
        errorBody(
          'unauthorized',
          m ? 'the bearer token is not valid' : 'this proxy needs Authorization: Bearer <token>'
        )
      );
  };
}
