/**
 * `vector-cache`: a semantic cache in front of RAG; a hit answers in about a millisecond with what retrieval answered
 * for that query before (the same documents), a miss goes to `rag`.
 */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { retrieve } from '../rag/corpus';
import { hashFraction } from '../../shared/random';
import { sleep } from '../util';

export function vectorCacheRoutes(env: HopEnv, hitRate: () => number): Routes {
  const lookups = new Counter({
    name: 'hopscope_vector_cache_lookups_total',
    help: 'Semantic cache lookups by result (hit|miss).',
    labelNames: ['result'],
    registers: [env.registry],
  });

  const lookup = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const query = req.body?.query;
    if (typeof query !== 'string' || !query) throw new HopError(400, 'validation', 'query must be a non-empty string');
    const k = Math.max(1, Math.min(50, Number(req.body?.k ?? env.cfg.ragTopK) | 0));
    span.updateName('lookup vector-cache');
    await sleep(env.scale(0.6));
    // Whether a semantically close query is cached: a stable draw per query against the configured hit rate.
    const hit = hashFraction(`vc:${query}`) < hitRate();
    span.setAttribute('hopscope.cache.hit', hit);
    lookups.inc({ result: hit ? 'hit' : 'miss' });
    if (hit) {
      // Retrieval is deterministic per query: the cached answer is the one rag gave when it was cached.
      const { documents, recall } = retrieve(query, k);
      sendJson(res, 200, { hit: true, documents, recall });
      return;
    }
    const { data } = await env.client.json('rag', '/v1/retrieve', { query, k }, { spanName: 'POST /v1/retrieve' });
    sendJson(res, 200, { hit: false, documents: data.documents, recall: data.recall });
  };
  return { 'POST /v1/lookup': lookup };
}
