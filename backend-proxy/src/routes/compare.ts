/**
 * GET /api/compare?a=<selector>&b=<selector>&from&to[&buckets] — A/B of inference backend × model version from spans.
 * Selector: `backend:vllm,model:llama-3-8b` (`=` works too; `service:` as well).
 */
import { Router } from 'express';
import { InferenceBackend } from '../../../contract';
import { badRequest } from '../http/errors';
import { NAME_RE, numberParam, stringParam, timeRange } from '../http/params';
import type { CompareService, Selector } from '../services/compare';

export function parseSelector(raw: string | undefined, name: string): Selector {
  if (!raw) throw badRequest(`${name}: a selector is required, e.g. ${name}=backend:vllm,model:llama-3-8b`);
  const sel: Selector = {};
  for (const part of raw.split(',')) {
    const m = /^\s*(backend|model|service)\s*[:=]\s*(.+?)\s*$/.exec(part);
    if (!m) throw badRequest(`${name}: "${part}" is not backend:<vllm|tgi|sglang>, model:<name> or service:<name>`);
    if (!NAME_RE.test(m[2]))
      throw badRequest(`${name}: "${m[2].slice(0, 60)}" has characters outside [A-Za-z0-9_.:-/]`);
    if (m[1] === 'backend') {
      const b = InferenceBackend.safeParse(m[2]);
      if (!b.success)
        throw badRequest(`${name}: backend "${m[2]}" is not one of ${InferenceBackend.options.join('|')}`);
      sel.backend = b.data;
    } else if (m[1] === 'model') sel.model = m[2];
    else sel.service = m[2];
  }
  return sel;
}

export function compareRoutes(compare: CompareService): Router {
  const r = Router();
  r.get('/compare', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const a = parseSelector(stringParam(q, 'a'), 'a');
    const b = parseSelector(stringParam(q, 'b'), 'b');
    const range = timeRange(q);
    res.json(await compare.compare({ a, b, range, buckets: numberParam(q, 'buckets', 1, 500) ?? 30 }));
  });
  return r;
}
