/** The express app: middleware (logs, metrics, CORS, auth, body limits), the routes over the services, JSON 404 and errors. */
import express from 'express';
import type pino from 'pino';
import type { ProxyConfig } from './config';
import { bearerAuth } from './http/auth';
import { cors } from './http/cors';
import { errorHandler, notFoundHandler } from './http/errors';
import { serverSpans } from './http/tracing';
import { httpDuration, httpRequests, registry } from './metrics';
import type { Services } from './services';
import { otlpRoutes } from './routes/otlp';
import { apiRoutes } from './routes/api';

export function buildApp(config: ProxyConfig, services: Services, log: pino.Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const t0 = performance.now();
    req.log = log;
    res.on('finish', () => {
      // The matched route pattern keeps label cardinality bounded (no trace ids in labels).
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : res.statusCode === 404 ? 'unmatched' : req.path.split('/').slice(0, 3).join('/');
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      httpDuration.observe({ route }, (performance.now() - t0) / 1000);
      if (log.isLevelEnabled('debug')) log.debug({ method: req.method, url: req.originalUrl, status: res.statusCode, ms: Math.round(performance.now() - t0) }, 'request');
    });
    next();
  });
  app.use(serverSpans());
  app.use(cors(config.corsOrigins));
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
  });
  app.use('/v1', otlpRoutes(config, services.ingest));
  app.use('/api', bearerAuth(config.token), express.json({ limit: config.bodyLimitBytes }), apiRoutes(services));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
