/** Which inference backend served a span (golden TGI TTFT, compare selectors); the rest of a span's facts: contract/spans. */
import type { InferenceBackend, Span } from '../../../contract';

/** A span of this inference backend: by its GenAI provider, else by its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  const p = s.attributes['gen_ai.provider.name'];
  if (typeof p === 'string' && p.toLowerCase() === backend) return true;
  return backend === 'tgi' ? /tgi|text-generation-inference/i.test(s.service) : /vllm/i.test(s.service);
}
