/**
 * Saved root-cause answers, for a postmortem to link to: the answer a user is looking at (a trace's, or a time
 * range's, computed now; or one given as is) kept in the database with its trace id or window, under an id. The
 * database's refusals become HTTP errors here: too big a 413, not an answer a 400, down a 503 with Retry-After.
 */
import {
  appLink,
  appPaths,
  type SaveRcaAnswerRequest,
  type SavedRcaAnswer,
  type SavedRcaAnswerMeta,
} from '../../../contract';
import type { Database } from '../db/database';
import { classify, DatabaseUnavailableError } from '../db/errors';
import * as repo from '../db/rca-answers-repo';
import { databaseUnavailable, DomainError, invalid, notFound } from '../domain/errors';
import type { RcaService } from './rca';

/** Grafana's data proxy path of the proxy's API (plugin.json route `api/*`), under HOPSCOPE_APP_URL. */
export const PLUGIN_API = '/api/plugin-proxy/hopscope-rca-app/api';

export interface SavedAnswerLinks {
  /** The saved answer as JSON, through Grafana (absolute, under HOPSCOPE_APP_URL). */
  api: string;
  /** The trace (or the range's overview) in the app. */
  app: string;
}

export function savedAnswerLinks(appUrl: string, m: SavedRcaAnswerMeta): SavedAnswerLinks {
  const range = m.fromMs !== null && m.toMs !== null ? { from: m.fromMs, to: m.toMs } : {};
  return {
    api: appLink(appUrl, `${PLUGIN_API}/rca/answers/${m.id}`),
    app: m.traceId ? appLink(appUrl, appPaths.trace(m.traceId), range) : appLink(appUrl, appPaths.overview(), range),
  };
}

function dbError(err: unknown, what: string): never {
  if (err instanceof repo.RcaAnswerInputError) {
    throw new DomainError(/over the .*-byte limit/.test(err.message) ? 'too_large' : 'invalid', err.message);
  }
  const e = classify(err, what);
  if (e instanceof DatabaseUnavailableError)
    throw databaseUnavailable(`${e.message}; retry in ${e.retryAfterS} s`, e.retryAfterS);
  throw e;
}

export class RcaAnswerService {
  constructor(
    private db: Database,
    private rca: RcaService,
    private appUrl: string
  ) {}

  /** Saves what the request names (computing it now when only a trace id or a range is given); 201 with the id. */
  async save(req: SaveRcaAnswerRequest): Promise<SavedRcaAnswerMeta & { links: SavedAnswerLinks }> {
    const hasRange = req.from !== undefined || req.to !== undefined;
    if (hasRange && (req.from === undefined || req.to === undefined))
      throw invalid('from and to: give both (epoch ms), or a traceId');
    if (hasRange && req.from! > req.to!) throw invalid(`from (${req.from}) is after to (${req.to})`);
    if (hasRange && req.to! - req.from! > 7 * 86_400_000) throw invalid('the range is over 7 days');
    let answer: unknown = req.answer;
    let fromMs = req.from;
    let toMs = req.to;
    if (answer === undefined) {
      if (req.traceId) {
        const a = await this.rca.forTrace(req.traceId);
        answer = a;
        if (fromMs === undefined) {
          // The trace's own window, so the saved answer opens on it.
          let start = Infinity;
          let end = -Infinity;
          for (const p of a.criticalPath) {
            if (p.startMs < start) start = p.startMs;
            if (p.endMs > end) end = p.endMs;
          }
          if (start <= end) {
            fromMs = Math.floor(start);
            toMs = Math.ceil(end);
          }
        }
      } else if (hasRange) {
        answer = await this.rca.forRange({ range: { from: fromMs!, to: toMs! }, service: req.service });
      } else {
        throw invalid('name what to save: a traceId, a range (from, to[, service]) or an answer');
      }
    }
    const title =
      req.title ??
      (req.traceId
        ? `Trace ${req.traceId}`
        : hasRange
          ? `${new Date(fromMs!).toISOString()} → ${new Date(toMs!).toISOString()}${req.service ? ` (${req.service})` : ''}`
          : undefined);
    try {
      const s = await repo.saveRcaAnswer(this.db, { answer, traceId: req.traceId, fromMs, toMs, title });
      const { answer: _a, ...m } = s;
      return { ...m, links: savedAnswerLinks(this.appUrl, m) };
    } catch (err) {
      dbError(err, 'the database (saved answers)');
    }
  }

  async get(id: string): Promise<SavedRcaAnswer & { links: SavedAnswerLinks }> {
    let s: repo.SavedRcaAnswer | null;
    try {
      s = await repo.getRcaAnswer(this.db, id);
    } catch (err) {
      dbError(err, 'the database (saved answers)');
    }
    if (!s) throw notFound(`no saved root-cause answer ${id.slice(0, 60)}`);
    const { answer: _a, ...m } = s;
    return { ...s, links: savedAnswerLinks(this.appUrl, m) };
  }

  /** Newest first; by trace id when given. */
  async list(o: { traceId?: string; limit?: number } = {}): Promise<SavedRcaAnswerMeta[]> {
    try {
      return await repo.listRcaAnswers(this.db, o);
    } catch (err) {
      dbError(err, 'the database (saved answers)');
    }
  }

  /** Saved answers of a trace (for the answer and the postmortem to link); empty when the database cannot say. */
  async ofTrace(traceId: string): Promise<SavedRcaAnswerMeta[]> {
    return repo.listRcaAnswers(this.db, { traceId, limit: 5 }).catch(() => []);
  }
}
