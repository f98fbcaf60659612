/** GET|PUT /api/alerts/rules and GET /api/alerts (firing and recently resolved composite alerts). */
import { Router } from 'express';
import { AlertRules, type AlertsAnswer } from '../../../contract';
import type { ProxyConfig } from '../config';
import { HttpError, badRequest } from '../http/errors';
import { timeRange } from '../http/params';
import type { AlertManager } from '../alerts/manager';

export function alertRoutes(_config: ProxyConfig, alerts: AlertManager): Router {
  const r = Router();
  r.get('/alerts/rules', (_req, res) => { res.json({ rules: alerts.rules }); });
  r.put('/alerts/rules', async (req, res) => {
    const parsed = AlertRules.safeParse(req.body);
    if (!parsed.success) throw badRequest(`rules: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const ids = parsed.data.rules.map((x) => x.id);
    if (new Set(ids).size !== ids.length) throw badRequest('rules: every rule id must be unique');
    try {
      alerts.setRules(parsed.data.rules);
    } catch (err) {
      throw new HttpError(500, 'not_saved', `rules not saved (${(err as Error).message}); the previous rules stay in effect`);
    }
    res.json({ rules: alerts.rules });
  });
  r.get('/alerts', async (req, res) => {
    // `?evaluate=1` runs a round now (tests, and a user pressing refresh); otherwise the loop's latest state.
    if (req.query.evaluate === '1' || alerts.evaluatedAt === null) await alerts.evaluate();
    const q = req.query as Record<string, unknown>;
    // from/to (optional) keep the alerts that overlap the dashboard's range.
    const range = q.from !== undefined || q.to !== undefined ? timeRange(q, 24 * 3600_000) : undefined;
    const list = alerts.list().filter((a) => !range || (a.startsAt <= range.to && (a.endsAt ?? Infinity) >= range.from));
    const answer: AlertsAnswer = { alerts: list, evaluatedAt: alerts.evaluatedAt, sources: alerts.lastSources };
    res.json(answer);
  });
  return r;
}
