/**
 * Composite alert rules and alerts, all from the database the proxies share:
 * GET /api/alerts/rules (the rule set and its `version`), PUT /api/alerts/rules (`{rules, expectedVersion?}`: 409 when
 * another save came first, 413 past the rule count or size, 400 when invalid or refused by the evaluator — nothing is
 * saved then), GET /api/alerts/rules/export (the rules as a file, the format HOPSCOPE_ALERT_RULES_FILE imports),
 * POST /api/alerts/rules/import (that file), GET /api/alerts[?from&to] (firing and resolved alerts, the range's
 * transitions, who evaluates), POST /api/alerts/evaluate[?from&to] (a round now, then that answer: it changes state,
 * so it is a write, for Editors' admin scope; GET ?evaluate=1 is refused). The database down is a 503 with Retry-After.
 */
import { Router, type ErrorRequestHandler } from 'express';
import { badRequest, HttpError } from '../http/errors';
import { timeRange, type TimeRange } from '../http/params';
import type { AlertService } from '../services/alerts';

const retryAfter: ErrorRequestHandler = (err, _req, res, next) => {
  if (err instanceof HttpError && err.status === 503) {
    const s = (err.details as { retryAfterS?: number } | undefined)?.retryAfterS ?? 2;
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(s))));
  }
  next(err);
};

export function alertRoutes(alerts: AlertService): Router {
  const r = Router();
  r.get('/alerts/rules', async (_req, res) => {
    res.json(await alerts.rules());
  });
  r.put('/alerts/rules', async (req, res) => {
    res.json(await alerts.replaceRules(req.body));
  });
  r.get('/alerts/rules/export', async (_req, res) => {
    const x = await alerts.exportRules();
    res.setHeader('content-disposition', `attachment; filename="hopscope-alert-rules-v${x.version}.json"`);
    res.json(x);
  });
  r.post('/alerts/rules/import', async (req, res) => {
    res.json(await alerts.replaceRules(req.body, { what: 'import' }));
  });
  // from/to (optional) keep the alerts that overlap the dashboard's range.
  const rangeOf = (q: Record<string, unknown>): TimeRange | undefined =>
    q.from !== undefined || q.to !== undefined ? timeRange(q, 24 * 3600_000) : undefined;
  r.get('/alerts', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    if (q.evaluate !== undefined)
      throw badRequest(
        'evaluate: a GET changes no state; POST /api/alerts/evaluate runs a round now (admin scope: Editors)'
      );
    res.json(await alerts.answer(rangeOf(q), false));
  });
  r.post('/alerts/evaluate', async (req, res) => {
    res.json(await alerts.answer(rangeOf(req.query as Record<string, unknown>), true));
  });
  r.use(retryAfter);
  return r;
}
