/** CORS closed by default: only configured origins get Access-Control-Allow-* headers (Grafana calls us server-side). */
import type { RequestHandler } from 'express';

export function cors(origins: string[]): RequestHandler {
  const any = origins.includes('*');
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin && (any || origins.includes(origin))) {
      res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS');
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
    }
    next();
  };
}
