/** GET /api/health — per source: ok, latency, error. */
import { Router } from 'express';
import type { HealthService } from '../services/health';

export function healthRoutes(health: HealthService): Router {
  const r = Router();
  r.get('/health', async (_req, res) => {
    res.json(await health.answer());
  });
  return r;
}
