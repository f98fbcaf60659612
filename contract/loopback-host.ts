/**
 * DNS rebinding protection shared by every Hopscope server that runs open (no token) on loopback: the backend proxy
 * (3301), the demo host page (3300), the bpf-exporter (3302) and the chain's control API (3319).
 *
 * A web page can make a browser send requests to 127.0.0.1 under the page's own host name (the name re-resolved to
 * loopback), and read the answers. A server reachable only on loopback and without a token therefore answers only
 * requests that name a loopback host (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`): a rebound name is a 403
 * `forbidden_host`. Servers with a token let the token decide and serve any Host (Kubernetes Services, Docker names).
 *
 * Not part of the zod contracts (not exported from contract/index.ts): plain code every server shares. Node types only,
 * so an express app mounts the guard as middleware and a bare `http` server calls it the same way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A Host header (with or without port) that names this machine's loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined) : h.replace(/:\d*$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === '::1' || name === '::ffff:127.0.0.1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(name)) return true;
  const v4 =
    /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name) ?? /^::ffff:127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return !!v4 && v4.slice(1).every((o) => Number(o) <= 255);
}

/** The 403 message: which Host was refused, why, and what to do instead. */
export function forbiddenHostMessage(host: string, server: string, instead: string): string {
  return `Host "${host.slice(0, 100)}" is not a loopback name: ${server} answers only requests to localhost or 127.0.0.1 (DNS rebinding protection); ${instead}`;
}

/**
 * Middleware (express or bare node:http) that answers 403 `{error:{code:'forbidden_host',message}}` to a request whose
 * Host header does not name loopback. A request without Host (HTTP/1.0) passes: a browser always sends one.
 */
export function loopbackHostGuard(
  server: string,
  instead: string
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    const host = req.headers.host;
    if (host === undefined || isLoopbackHost(host)) return next();
    const body = JSON.stringify({
      error: { code: 'forbidden_host', message: forbiddenHostMessage(host, server, instead) },
    });
    res.statusCode = 403;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(body));
    res.end(body);
  };
}
