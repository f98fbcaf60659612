/**
 * Which spans are an inference server's own (compare, golden TGI TTFT); which backend a span is, and the rest of a
 * span's facts: contract/spans. An engine's own request span (vLLM's `llm_request`, SGLang's request span, TGI's
 * router span: contract/engines) counts whatever its kind; one request is counted once, by its outermost such span.
 */
import { engineOfSpan, inferenceBackendOfSpan, type InferenceBackend, type Span } from '../../../contract';

/** A span of this inference backend: by its GenAI provider, its engine's span shape, else its service's name. */
export function isBackendSpan(s: Span, backend: InferenceBackend): boolean {
  return inferenceBackendOfSpan(s) === backend;
}

/** GenAI operations that are not one inference request: an agent run spans many of them, a tool call none. */
const NOT_INFERENCE = new Set(['invoke_agent', 'create_agent', 'execute_tool', 'embeddings']);

/**
 * An inference server's own request span: a server span of a vLLM/TGI/SGLang backend, or an engine's own request span
 * of any kind (SGLang's and TGI's are INTERNAL); not an agent run (whose server span names a provider too) and not the
 * callers' client spans (the gateway's and the agent's `chat <model>` calls).
 */
export function isInferenceServerSpan(s: Span): boolean {
  if (engineOfSpan(s)) return true;
  if (s.kind !== 'server') return false;
  const op = s.attributes['gen_ai.operation.name'];
  if (typeof op === 'string' && NOT_INFERENCE.has(op)) return false;
  return inferenceBackendOfSpan(s) !== undefined;
}

/**
 * One span per request: of the given spans, those whose parent is not itself among them (an HTTP server span with
 * the engine's own request span inside counts once, as the outer span).
 */
export function outermostOf(spans: Span[]): Span[] {
  const ids = new Set(spans.map((s) => `${s.traceId}/${s.spanId}`));
  return spans.filter((s) => !s.parentSpanId || !ids.has(`${s.traceId}/${s.parentSpanId}`));
}
