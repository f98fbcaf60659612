/**
 * Saved root-cause answers: POST /api/rca/answers (`{traceId}` or `{from, to[, service]}`, computed now, or
 * `{answer}` as is; optional `title`) → 201 `{id, links…}`; GET /api/rca/answers/:id (the answer as saved);
 * GET /api/rca/answers[?traceId][&limit] (newest first, without the answers). The database down is a 503 with
 * Retry-After.
 */
import { Router, type ErrorRequestHandler } from 'express';
import { formatZodError, SaveRcaAnswerRequest } from '../../../contract';
import { badRequest, HttpError } from '../http/errors';
import { numberParam, stringParam } from '../http/params';
import type { RcaAnswerService } from '../services/rca-answers';

const retryAfter: ErrorRequestHandler = (err, _req, res, next) => {
  if (err instanceof HttpError && err.status === 503) {
    res.setHeader(
      'Retry-After',
      String(Math.max(1, Math.ceil((err.details as { retryAfterS?: number } | undefined)?.retryAfterS ?? 2)))
    );
  }
  next(err);
};

export function rcaAnswerRoutes(answers: RcaAnswerService): Router {
  const r = Router();
  r.post('/rca/answers', async (req, res) => {
    const p = SaveRcaAnswerRequest.safeParse(req.body ?? {});
    if (!p.success) throw badRequest(formatZodError(p.error, { root: 'body' }));
    res.status(201).json(await answers.save(p.data));
  });
  r.get('/rca/answers', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const traceId = stringParam(q, 'traceId');
    if (traceId !== undefined && !/^[0-9a-f]{32}$/.test(traceId)) throw badRequest('traceId: 32 lowercase hex digits');
    const limit = numberParam(q, 'limit', 1, 500);
    res.json({ answers: await answers.list({ traceId, limit: limit === undefined ? undefined : Math.floor(limit) }) });
  });
  r.get('/rca/answers/:id', async (req, res) => {
    res.json(await answers.get(String(req.params.id)));
  });
  r.use(retryAfter);
  return r;
}
