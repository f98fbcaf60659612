/** GET|PUT /api/alerts/rules and GET /api/alerts (firing and recently resolved composite alerts). */
import { Router } from 'express';
import { AlertRules, formatZodError } from '../../../contract';
import { badRequest } from '../http/errors';
import { timeRange } from '../http/params';
import type { AlertService } from '../services/alerts';

export function alertRoutes(alerts: AlertService): Router {
  const r = Router();
  r.get('/alerts/rules', (_req, res) => { res.json({ rules: alerts.rules }); });
  r.put('/alerts/rules', (req, res) => {
    const parsed = AlertRules.safeParse(req.body);
    if (!parsed.success) throw badRequest(formatZodError(parsed.error, { root: 'body' }));
    const ids = parsed.data.rules.map((x) => x.id);
    if (new Set(ids).size !== ids.length) throw badRequest('rules: every rule id must be unique');
    res.json({ rules: alerts.replaceRules(parsed.data.rules) });
  });
  r.get('/alerts', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    // from/to (optional) keep the alerts that overlap the dashboard's range.
    const range = q.from !== undefined || q.to !== undefined ? timeRange(q, 24 * 3600_000) : undefined;
    res.json(await alerts.answer(range, q.evaluate === '1'));
  });
  return r;
}
