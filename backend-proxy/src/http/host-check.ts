/**
 * DNS rebinding: a web page can make a browser send requests to 127.0.0.1 under the page's own host name (the name
 * re-resolved to loopback), and read the answers. Without a token the proxy is reachable only on loopback, so it
 * answers only requests that name a loopback host (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`): a rebound
 * name is a 403. With a token, the token protects it and any Host is served (Kubernetes Services, Docker names).
 */
import type { RequestHandler } from 'express';
import { isLoopbackHost } from '../../../contract/loopback-host';
import { errorBody } from './errors';

// One implementation for every part that runs open on loopback (host page, exporter, chain control API).
export { isLoopbackHost };

export function loopbackHostOnly(token: string | undefined): RequestHandler {
  if (token) return (_req, _res, next) => next();
  return (req, res, next) => {
    const host = req.headers.host;
    // HTTP/1.0 clients may send none; a browser always does.
    if (host === undefined || isLoopbackHost(host)) return next();
    res
      .status(403)
      .json(
        errorBody(
          'forbidden_host',
          `Host "${host.slice(0, 100)}" is not a loopback name: without HOPSCOPE_PROXY_TOKEN the proxy answers only requests to localhost or 127.0.0.1 (DNS rebinding protection); set a token to serve other names`
        )
      );
  };
}
