/** `embedding`: turns text into a vector; time grows with input tokens and requests queue past 4 at once. */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { Histogram } from 'prom-client';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { hashFraction } from '../../shared/random';
import { countTokens } from '../../shared/text';
import { ConcurrencyGate, sleep } from '../util';

export const EMBED_MODEL = 'hopscope-embed-small';
export const EMBED_DIM = 16;
/** OpenTelemetry GenAI semconv buckets for gen_ai.server.request.duration. */
export const GENAI_DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

export function embeddingRoutes(env: HopEnv): Routes {
  const gate = new ConcurrencyGate(4);
  const dur = new Histogram({
    name: 'gen_ai_server_request_duration_seconds',
    help: 'Generative AI server request duration such as time-to-last byte or last output token.',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'],
    buckets: GENAI_DURATION_BUCKETS,
    registers: [env.registry],
  });
  const tokens = new Histogram({
    name: 'hopscope_embedding_input_tokens',
    help: 'Input tokens per embedding request.',
    buckets: [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
    registers: [env.registry],
  });

  const embed = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const input = req.body?.input;
    const texts: string[] = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
    if (!texts.length || texts.some((t) => typeof t !== 'string'))
      throw new HopError(400, 'validation', 'input must be a string or an array of strings');
    const n = texts.reduce((s, t) => s + countTokens(t), 0);
    const t0 = performance.now();
    span.updateName(`embeddings ${EMBED_MODEL}`);
    span.setAttributes({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.provider.name': 'hopscope',
      'gen_ai.request.model': EMBED_MODEL,
      'gen_ai.usage.input_tokens': n,
      'gen_ai.embeddings.dimension.count': EMBED_DIM,
    });
    const queuedAt = performance.now();
    await gate.run(async () => {
      span.setAttribute('hopscope.queue_ms', performance.now() - queuedAt);
      await sleep(env.scale(2 + 0.015 * n));
    });
    const data = texts.map((t, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from({ length: EMBED_DIM }, (_, i) => Number((hashFraction(`${i}:${t}`) * 2 - 1).toFixed(4))),
    }));
    span.setAttribute('gen_ai.response.model', EMBED_MODEL);
    tokens.observe(n);
    dur.observe(
      {
        gen_ai_operation_name: 'embeddings',
        gen_ai_provider_name: 'hopscope',
        gen_ai_request_model: EMBED_MODEL,
        gen_ai_response_model: EMBED_MODEL,
      },
      (performance.now() - t0) / 1000
    );
    sendJson(res, 200, { object: 'list', data, model: EMBED_MODEL, usage: { prompt_tokens: n, total_tokens: n } });
  };
  return { 'POST /v1/embeddings': embed };
}
