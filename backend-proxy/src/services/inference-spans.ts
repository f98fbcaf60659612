/**
 * Which spans are an inference server's own (compare, golden TGI TTFT), and which backend served them; the rest of a
 * span's facts: contract/spans.
 */
import type { InferenceBackend, Span } from '../../../contract';
import { backendOfName } from '../store/enrich';

/** A span of this inference backend: by its GenAI provider, else by its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  return backendOfSpan(s) === backend;
}

/** The inference backend a span names: `gen_ai.provider.name`, else its service's name (`llm-vllm`, `tgi`…). */
export function backendOfSpan(s: Span): InferenceBackend | undefined {
  const p = s.attributes['gen_ai.provider.name'];
  if (typeof p === 'string') {
    const b = p.toLowerCase();
    if (b === 'vllm' || b === 'tgi') return b;
  }
  return backendOfName(s.service);
}

/** GenAI operations that are not one inference request: an agent run spans many of them, a tool call none. */
const NOT_INFERENCE = new Set(['invoke_agent', 'create_agent', 'execute_tool', 'embeddings']);

/**
 * An inference server's own request span: a server span of a vLLM/TGI backend, not an agent run (whose server span
 * names a provider too) and not the callers' client spans (the gateway's and the agent's `chat <model>` calls).
 */
export function isInferenceServerSpan(s: Span): boolean {
  if (s.kind !== 'server') return false;
  const op = s.attributes['gen_ai.operation.name'];
  if (typeof op === 'string' && NOT_INFERENCE.has(op)) return false;
  return backendOfSpan(s) !== undefined;
}
