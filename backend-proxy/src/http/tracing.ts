/**
 * A SERVER span for every request the proxy serves, a child of the caller's W3C `traceparent` (Grafana's data
 * proxy sends it), so a Grafana trace continues into the proxy and, through sources/http.ts, into its source calls.
 * Named `METHOD route` by the matched route pattern (no ids in names); `/metrics` and `POST /v1/traces` get none
 * (scrapes are noise, and spans about receiving spans would feed themselves when the proxy exports to itself).
 * Without a configured tracer provider every call here is the API's no-op.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';

const tracer = trace.getTracer('hopscope-proxy');
const UNTRACED = /^\/(metrics|v1\/traces)\/?$/;

export function serverSpans(): RequestHandler {
  return (req, res, next) => {
    if (UNTRACED.test(req.path)) return next();
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = req.method;
    const span = tracer.startSpan(method, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': req.path,
        'url.scheme': req.protocol,
        ...(req.headers['user-agent'] ? { 'user_agent.original': String(req.headers['user-agent']).slice(0, 200) } : {}),
      },
    }, parent);
    let ended = false;
    const end = (aborted: boolean): void => {
      if (ended) return;
      ended = true;
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : undefined;
      if (route) {
        span.updateName(`${method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (aborted) span.setStatus({ code: SpanStatusCode.ERROR, message: 'client closed the connection before the answer' });
      else if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.statusCode}` });
      span.end();
    };
    res.on('finish', () => end(false));
    res.on('close', () => end(!res.writableFinished));
    // Everything the request causes runs in its context, the body parsers' callbacks included (async context follows
    // the request stream's events; tested with a POST body of many chunks).
    context.with(trace.setSpan(parent, span), next);
  };
}
