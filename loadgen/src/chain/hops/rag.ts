/**
 * `rag`: top-k retrieval over the chain's document corpus (rag/corpus.ts); time grows with k, and each answer returns
 * the documents' ids and its true recall (the share of the query's relevant documents it found).
 */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { Histogram } from 'prom-client';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { retrieve as search } from '../rag/corpus';
import { ConcurrencyGate, sleep } from '../util';

export const RAG_SOURCE = 'hopscope-docs';

export function ragRoutes(env: HopEnv): Routes {
  const gate = new ConcurrencyGate(8);
  const recallH = new Histogram({
    name: 'hopscope_rag_recall',
    help: 'Recall@k of each retrieval (share of the relevant documents found).',
    buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1],
    registers: [env.registry],
  });
  const docsH = new Histogram({
    name: 'hopscope_rag_retrieved_documents',
    help: 'Documents returned per retrieval.',
    buckets: [1, 2, 3, 5, 8, 10, 20, 50],
    registers: [env.registry],
  });

  const retrieve = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const query = req.body?.query;
    if (typeof query !== 'string' || !query) throw new HopError(400, 'validation', 'query must be a non-empty string');
    const k = Math.max(1, Math.min(50, Number(req.body?.k ?? env.cfg.ragTopK) | 0));
    span.updateName(`retrieval ${RAG_SOURCE}`);
    span.setAttributes({
      'gen_ai.operation.name': 'retrieval',
      'gen_ai.data_source.id': RAG_SOURCE,
      'hopscope.rag.top_k': k,
    });
    const queuedAt = performance.now();
    await gate.run(async () => {
      span.setAttribute('hopscope.queue_ms', performance.now() - queuedAt);
      await sleep(env.scale(6 + 1.2 * k));
    });
    const { documents, recall, topic } = search(query, k);
    span.setAttributes({
      'hopscope.rag.document_ids': documents.map((d) => d.id),
      ...(topic ? { 'hopscope.rag.topic': topic } : {}),
    });
    if (recall !== null) {
      span.setAttribute('hopscope.rag.recall', recall);
      recallH.observe(recall);
    }
    docsH.observe(documents.length);
    sendJson(res, 200, { documents, recall, source: RAG_SOURCE });
  };
  return { 'POST /v1/retrieve': retrieve };
}
