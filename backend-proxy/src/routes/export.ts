/**
 * GET /api/export/postmortem — the current view for a postmortem.
 *   format=md  (default): Markdown with the time range, trace ids, ranked causes with evidence, faults, alerts, links back.
 *   window=1 (the Explain page): the Markdown carries the window root cause of the range (as GET /api/rca answers it).
 *   format=png: a PNG of an app view (`view=/a/hopscope-rca-app/...`, a path of the app only).
 */
import { Router } from 'express';
import { APP_BASE } from '../../../contract';
import { badRequest } from '../http/errors';
import { enumParam, nameParam, stringParam, timeRange } from '../http/params';
import type { ExportService } from '../services/export';

const TRACE_ID_RE = /^[0-9a-fA-F]{1,32}$/;

/** A `.` or `..` path segment, as a URL parser sees it (`%2e` is a dot there too): it would leave the app's path. */
const DOT_SEGMENT = /^(\.|%2e){1,2}$/i;

export function viewPath(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\/[A-Za-z0-9_.~\-/%?&=:,+]*$/.test(raw) || raw.startsWith('//'))
    throw badRequest(`view: must be a path of the app, e.g. ${APP_BASE}/traces/<id>?from=...`);
  if (
    raw
      .split(/[?#]/)[0]
      .split('/')
      .some((seg) => DOT_SEGMENT.test(seg))
  )
    throw badRequest('view: must not contain . or .. path segments (a path of the app only)');
  return raw;
}

export function exportRoutes(exports: ExportService): Router {
  const r = Router();
  r.get('/export/postmortem', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const format = enumParam(q, 'format', ['md', 'png'] as const) ?? 'md';
    const range = timeRange(q, 60 * 60_000);
    const view = viewPath(stringParam(q, 'view'));
    const traceIds = (stringParam(q, 'traceId') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (traceIds.length > 10) throw badRequest('traceId: at most 10 trace ids per export');
    // Ids are echoed into the Markdown (in code spans and links): only what a trace id can be gets that far.
    for (const id of traceIds)
      if (!TRACE_ID_RE.test(id)) throw badRequest(`traceId: "${id.slice(0, 40)}" is not a trace id (1-32 hex digits)`);
    const service = nameParam(q, 'service');
    const pod = nameParam(q, 'pod');
    if (format === 'png') {
      if (!view) throw badRequest('view: the app path to render is required for format=png');
      res.type('image/png').send(await exports.png(view));
      return;
    }
    const window = enumParam(q, 'window', ['0', '1'] as const) === '1';
    res
      .type('text/markdown; charset=utf-8')
      .send(await exports.markdown({ range, view, traceIds, service, pod, window }));
  });
  return r;
}
