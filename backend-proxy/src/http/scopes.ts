/**
 * Token scopes: what a bearer token may do. `read` (Grafana for everyone: every GET, and POST /api/rca, which only
 * computes), `ingest` (load workers and OTLP exporters: POST /v1/traces, a run's registration, heartbeats and finish,
 * and reading runs back for baselines), `admin` (Editors' writes: alert rules, saved answers, deletes; it reads too).
 * One variable per scope (HOPSCOPE_READ_TOKEN, HOPSCOPE_INGEST_TOKEN, HOPSCOPE_ADMIN_TOKEN); the old
 * HOPSCOPE_PROXY_TOKEN is still accepted as every scope at once (the proxy warns at start). Without any token the
 * proxy serves only loopback, as before.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { errorBody } from './errors';

export type Scope = 'read' | 'ingest' | 'admin';

export interface ScopedTokens {
  read?: string;
  ingest?: string;
  admin?: string;
  /** HOPSCOPE_PROXY_TOKEN: every scope (deprecated). */
  all?: string;
}

/** Whether any token is configured (then /api and /v1 need one). */
export const anyToken = (t: ScopedTokens): boolean => Boolean(t.read || t.ingest || t.admin || t.all);

/** The scopes each token holds. */
const HELD: Record<keyof ScopedTokens, readonly Scope[]> = {
  read: ['read'],
  ingest: ['ingest'],
  admin: ['admin', 'read'],
  all: ['read', 'ingest', 'admin'],
};

const RUN_WRITE = /^\/api\/runs(\/[^/]+\/(heartbeat|finish))?\/?$/;

/** The scope a request needs, from its method and path (the full path, /api/… or /v1/…). */
export function scopeOf(method: string, path: string): Scope {
  if (path.startsWith('/v1/')) return 'ingest';
  const m = method.toUpperCase();
  if (m === 'POST' && RUN_WRITE.test(path)) return 'ingest';
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return 'read';
  if (m === 'POST' && /^\/api\/rca\/?$/.test(path)) return 'read';
  return 'admin';
}

/** Whether `scopes` may do what needs `need`: a load worker (ingest) also reads runs back (its baseline run). */
function allowed(scopes: readonly Scope[], need: Scope, method: string, path: string): boolean {
  if (scopes.includes(need)) return true;
  return (
    need === 'read' && scopes.includes('ingest') && /^(GET|HEAD)$/i.test(method) && /^\/api\/runs(\/|$)/.test(path)
  );
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Bearer tokens checked against the scope the request needs (constant-time: a token cannot be guessed byte by byte).
 * No token configured: everything passes (loopback only, see host-check.ts). A valid token without the scope: 403.
 */
export function scopedAuth(tokens: ScopedTokens): RequestHandler {
  if (!anyToken(tokens)) return (_req, _res, next) => next();
  const known = (Object.keys(HELD) as Array<keyof ScopedTokens>)
    .filter((k) => tokens[k])
    .map((k) => ({ want: digest(tokens[k]!), scopes: HELD[k] }));
  return (req: Request, res, next) => {
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const path = `${req.baseUrl}${req.path}`;
    const need = scopeOf(req.method, path);
    if (m) {
      const got = digest(m[1].trim());
      // Every token compared (no early exit): the time taken does not say which one matched.
      let scopes: readonly Scope[] | undefined;
      for (const k of known) if (timingSafeEqual(got, k.want)) scopes ??= k.scopes;
      if (scopes && allowed(scopes, need, req.method, path)) return next();
      if (scopes) {
        res
          .status(403)
          .json(
            errorBody(
              'forbidden',
              `this token may ${scopes.join(', ')}; ${req.method} ${path} needs the ${need} scope (HOPSCOPE_${need.toUpperCase()}_TOKEN)`
            )
          );
        return;
      }
    }
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
