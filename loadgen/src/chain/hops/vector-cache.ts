/** `vector-cache`: a semantic cache in front of RAG; a hit answers in about a millisecond, a miss goes to `rag`. */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import { HopError, sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { fillerText, hashFraction, sleep } from '../util';

export function vectorCacheRoutes(env: HopEnv, hitRate: () => number): Routes {
  const lookups = new Counter({ name: 'hopscope_vector_cache_lookups_total', help: 'Semantic cache lookups by result (hit|miss).', labelNames: ['result'], registers: [env.registry] });

  const lookup = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const query = req.body?.query;
    if (typeof query !== 'string' || !query) throw new HopError(400, 'validation', 'query must be a non-empty string');
    const k = Number(req.body?.k ?? env.cfg.ragTopK);
    span.updateName('lookup vector-cache');
    await sleep(env.scale(0.6));
    // Whether a semantically close query is cached: a stable draw per query against the configured hit rate.
    const hit = hashFraction(`vc:${query}`) < hitRate();
    span.setAttribute('hopscope.cache.hit', hit);
    lookups.inc({ result: hit ? 'hit' : 'miss' });
    if (hit) {
      const documents = Array.from({ length: k }, (_, i) => ({ id: `doc-c${i}`, score: 0.9, text: fillerText(60, i) }));
      sendJson(res, 200, { hit: true, documents, recall: null });
      return;
    }
    const { data } = await env.client.json('rag', '/v1/retrieve', { query, k }, { spanName: 'POST /v1/retrieve' });
    sendJson(res, 200, { hit: false, documents: data.documents, recall: data.recall });
  };
  return { 'POST /v1/lookup': lookup };
}
