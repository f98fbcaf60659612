/**
 * Span enrichment on ingest (seed: model id, prompt length, batch size → GenAI attributes), in TypeScript in our
 * OTLP path. Never overwrites what instrumentation set; records what it added in `hopscope.enriched`.
 * Batch size has no GenAI semantic-convention attribute, so it goes to `hopscope.batch_size`.
 */
import { inferenceBackendOfName, type Span } from '../../../contract';

type Scalar = string | number | boolean;

/** target attribute ← first present source attribute (span attributes first, then resource). */
const RULES: Array<{ target: string; from: string[]; as: 'string' | 'int' }> = [
  {
    target: 'gen_ai.request.model',
    from: ['llm.request.model', 'llm.model', 'llm.model_name', 'model_id', 'model', 'model_name', 'hopscope.model'],
    as: 'string',
  },
  {
    target: 'gen_ai.usage.input_tokens',
    from: [
      'llm.usage.prompt_tokens',
      'llm.prompt_tokens',
      'prompt_tokens',
      'prompt_length',
      'input_tokens',
      'hopscope.prompt_tokens',
    ],
    as: 'int',
  },
  {
    target: 'gen_ai.usage.output_tokens',
    from: [
      'llm.usage.completion_tokens',
      'llm.completion_tokens',
      'completion_tokens',
      'output_tokens',
      'hopscope.output_tokens',
    ],
    as: 'int',
  },
  { target: 'hopscope.batch_size', from: ['batch_size', 'llm.batch_size', 'vllm.batch_size'], as: 'int' },
];

function pick(span: Span, keys: string[]): Scalar | undefined {
  for (const k of keys) {
    const v = span.attributes[k] ?? span.resource[k];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

/** Mutates and returns the span. */
export function enrichSpan(span: Span): Span {
  const added: string[] = [];
  const a = span.attributes;
  for (const r of RULES) {
    if (a[r.target] !== undefined) continue;
    const v = pick(span, r.from);
    if (v === undefined) continue;
    if (r.as === 'int') {
      const n = typeof v === 'number' ? v : Number(v);
      if (!Number.isFinite(n) || n < 0) continue;
      a[r.target] = Math.round(n);
    } else {
      a[r.target] = String(v);
    }
    added.push(r.target);
  }
  // An LLM-serving span with a model but no operation name is a chat call in the simulated chain and in vLLM/TGI.
  if (a['gen_ai.request.model'] !== undefined && a['gen_ai.operation.name'] === undefined) {
    a['gen_ai.operation.name'] = 'chat';
    added.push('gen_ai.operation.name');
  }
  if (a['gen_ai.request.model'] !== undefined && a['gen_ai.provider.name'] === undefined) {
    const p = inferenceBackendOfName(`${span.service} ${span.resource['service.name'] ?? ''}`);
    if (p) {
      a['gen_ai.provider.name'] = p;
      added.push('gen_ai.provider.name');
    }
  }
  if (added.length) a['hopscope.enriched'] = added.join(',');
  return span;
}
