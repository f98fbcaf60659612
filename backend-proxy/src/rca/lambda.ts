/** λ: how much a hop's extra time counts, by hop type (seed 2.5). Returns the weight and the reasons behind it. */
import { kvCacheHitRateOfSpan, type Span } from '../../../contract';
import type { RcaConfig } from './config';

const num = (v: unknown): number | undefined =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;

const LLM_OPS = new Set(['chat', 'text_completion', 'generate_content', 'completion', 'generate']);

export function lambdaFor(s: Span, c: RcaConfig): { lambda: number; reasons: string[] } {
  let lambda = c.lambda.byService[s.service] ?? 1;
  const reasons: string[] = lambda !== 1 ? [`service weight ${lambda}`] : [];
  const op = s.attributes['gen_ai.operation.name'];
  const input = num(s.attributes['gen_ai.usage.input_tokens']);
  if (op === 'embeddings' && input !== undefined && input > c.lambda.embeddingInputTokens) {
    lambda *= c.lambda.embeddingLongInput;
    reasons.push(
      `λ ${c.lambda.embeddingLongInput}: embedding input ${input} > ${c.lambda.embeddingInputTokens} tokens (expected to be slow)`
    );
  }
  if (typeof op === 'string' && LLM_OPS.has(op)) {
    const hit = kvCacheHitRateOfSpan(s);
    if (hit !== undefined && hit < c.lambda.kvCacheHitRate) {
      lambda *= c.lambda.kvCacheLowHit;
      reasons.push(
        `λ ${c.lambda.kvCacheLowHit}: KV-cache hit rate ${(hit * 100).toFixed(0)}% < ${(c.lambda.kvCacheHitRate * 100).toFixed(0)}%`
      );
    }
  }
  return { lambda, reasons };
}
