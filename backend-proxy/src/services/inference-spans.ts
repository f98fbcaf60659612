/**
 * Which spans are an inference server's own (compare, golden TGI TTFT); which backend a span is, and the rest of a
 * span's facts: contract/spans.
 */
import { inferenceBackendOfSpan, type InferenceBackend, type Span } from '../../../contract';

/** A span of this inference backend: by its GenAI provider, else by its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  return inferenceBackendOfSpan(s) === backend;
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
  return inferenceBackendOfSpan(s) !== undefined;
}
