/** What a span says about LLM inference: which backend served it, and its time to first token. */
import type { InferenceBackend, Span } from '../../../contract';

/** TTFT in ms from a span, whichever attribute the instrumentation used. */
export function spanTtftMs(s: Span): number | undefined {
  const a = s.attributes;
  const ms = a['hopscope.ttft_ms'] ?? a['gen_ai.response.time_to_first_token_ms'];
  if (typeof ms === 'number') return ms;
  const sec = a['gen_ai.client.operation.time_to_first_chunk'] ?? a['gen_ai.server.time_to_first_token'] ?? a['gen_ai.response.time_to_first_chunk'];
  if (typeof sec === 'number') return sec * 1000;
  return undefined;
}

/** A span of this inference backend: by its GenAI provider, else by its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  const p = s.attributes['gen_ai.provider.name'];
  if (typeof p === 'string' && p.toLowerCase() === backend) return true;
  return backend === 'tgi' ? /tgi|text-generation-inference/i.test(s.service) : /vllm/i.test(s.service);
}
