/** Which inference backend served a span (golden TGI TTFT, compare selectors); the rest of a span's facts: contract/spans. */
import type { InferenceBackend, Span } from '../../../contract';
import { backendOfName } from '../store/enrich';

/** A span of this inference backend: by its GenAI provider, else by its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  const p = s.attributes['gen_ai.provider.name'];
  if (typeof p === 'string' && p.toLowerCase() === backend) return true;
  return backendOfName(s.service) === backend;
}
