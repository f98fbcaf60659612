/** The express app: middleware (logs, metrics, CORS, auth, body limits), the routes over the services, JSON 404 and errors. */
import express from 'express';
import type pino from 'pino';
import type { ProxyConfig } from './config';
import { tokensOf } from './config';
import { bodyBudget } from './http/backpressure';
import { cors } from './http/cors';
import { errorHandler, notFoundHandler } from './http/errors';
import { loopbackHostOnly } from './http/host-check';
import { anyToken, scopedAuth } from './http/scopes';
import { assertJsonDepth } from './domain/json-depth';
import { httpDuration, httpRequests, registry } from './metrics';
import type { Services } from './services';
import { otlpRoutes } from './routes/otlp';
import { apiRoutes } from './routes/api';
import { isRawRcaBody } from './routes/rca';

/** How many bodies of the largest allowed size the proxy receives at once before it answers 503 (back-pressure). */
export const BODY_BUDGET_BODIES = 8;

/**
 * The route pattern a request matched, for metric labels: `/api/traces/:traceId`, never the id itself. Read when the
 * answer is sent, after express has left the mounting routers (req.baseUrl is empty again then), so the mount is
 * taken from the URL: every route lives under /api or /v1, or at the top (/metrics).
 */
export function routeLabel(req: express.Request): string {
  const pattern = req.route?.path;
  if (typeof pattern !== 'string') return 'unmatched';
  // An absolute-form target (`GET http://host/api/...`) is routed by its path too.
  const path = req.originalUrl.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/, '');
  const mount = /^\/(api|v1)(?=\/|$)/.exec(path)?.[0] ?? '';
  return `${mount}${pattern}`;
}

export function buildApp(config: ProxyConfig, services: Services, log: pino.Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const t0 = performance.now();
    req.log = log;
    res.on('finish', () => {
      // The matched route pattern keeps label cardinality bounded (no trace ids in labels); anything that matched no
      // route (404s, and requests refused before routing: auth, body limits, malformed bodies) is one value.
      const route = routeLabel(req);
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      httpDuration.observe({ route }, (performance.now() - t0) / 1000);
      if (log.isLevelEnabled('debug'))
        log.debug(
          { method: req.method, url: req.originalUrl, status: res.statusCode, ms: Math.round(performance.now() - t0) },
          'request'
        );
    });
    next();
  });
  const tokens = tokensOf(config);
  app.use(loopbackHostOnly(anyToken(tokens) ? 'set' : undefined));
  app.use(cors(config.corsOrigins));
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
  });
  // Bodies received and handled at once: BODY_BUDGET_BODIES of the largest allowed, then 503 + Retry-After.
  const budget = bodyBudget(BODY_BUDGET_BODIES * config.bodyLimitBytes, config.bodyLimitBytes);
  app.use('/v1', otlpRoutes(config, services.ingest, budget.handler));
  // A JSON body deeper than MAX_JSON_DEPTH is refused before it is parsed (the code walking it would overflow the stack).
  // POST /api/rca's body is read raw and checked and parsed off the event loop, in the engine's worker (routes/rca.ts).
  const verify = (_req: unknown, _res: unknown, buf: Buffer): void => assertJsonDepth(buf, 'the JSON body');
  const json = express.json({
    limit: config.bodyLimitBytes,
    verify,
    type: (req) =>
      !isRawRcaBody(req.method ?? '', req.url ?? '') &&
      /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(req.headers['content-type'] ?? ''),
  });
  const raw = express.raw({
    limit: config.bodyLimitBytes,
    type: (req) => isRawRcaBody(req.method ?? '', req.url ?? ''),
  });
  app.use('/api', scopedAuth(tokens), budget.handler, json, raw, apiRoutes(services));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
