/**
 * One HTTP request with a chosen Host header (fetch cannot set one): what a browser sends after DNS rebinding, a web
 * page's own name pointing at 127.0.0.1. Used by the Host allow-list tests of every part that runs open on loopback.
 */
import { request } from 'node:http';

export function requestWithHost(
  baseUrl: string,
  host: string,
  o: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}
): Promise<{ status: number; body: string }> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: o.method ?? 'GET',
        path: o.path ?? '/',
        headers: { ...o.headers, host },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      }
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${baseUrl} within 10 s`)));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Host headers a rebound page could send, and loopback names that must still be served. */
export const FOREIGN_HOSTS = ['evil.example', 'evil.example:3302', '127.0.0.1.evil.example', '0.0.0.0', '[::2]'];
export const loopbackHosts = (port: number): string[] => [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
