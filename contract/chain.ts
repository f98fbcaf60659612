import { z } from 'zod';

/** The simulated chain's hops, in call order: the one list that topology, faults and the app derive from. */
export const HOPS = [
  'gateway',
  'embedding',
  'vector-cache',
  'rag',
  'llm-vllm',
  'llm-tgi',
  'llm-sglang',
  'agent',
  'tool',
] as const;
export const ChainHop = z.enum(HOPS);
export type HopName = z.infer<typeof ChainHop>;

/** The chain's inference backends and the hop serving each (the gateway's `x-hopscope-backend`). */
export const LLM_BACKENDS = ['vllm', 'tgi', 'sglang'] as const;
export type LlmBackend = (typeof LLM_BACKENDS)[number];
export const LLM_HOP_OF: Readonly<Record<LlmBackend, HopName>> = {
  vllm: 'llm-vllm',
  tgi: 'llm-tgi',
  sglang: 'llm-sglang',
};
/** The backend a chain hop serves, or undefined for a hop that is no LLM server. */
export const llmBackendOfHop = (hop: string): LlmBackend | undefined => LLM_BACKENDS.find((b) => LLM_HOP_OF[b] === hop);

/**
 * What the simulated chain's gateway adds to an OpenAI-compatible chat answer, so a load generator can grade quality
 * (RAG recall, agent task completion) and see degradations (a fallback model) without reading traces:
 * - non-streaming: a top-level `hopscope` field of the `chat.completion` object;
 * - streaming: one `chat.completion.chunk` (same `id` as the others) with `choices: []` and the `hopscope` field, just
 *   before `data: [DONE]` — OpenAI clients already accept choice-less chunks (the `include_usage` chunk is one).
 * The gateway also answers a W3C Trace Context Level 2 `traceresponse: 00-<trace-id>-<span-id>-<flags>` header on
 * every response (errors and streams included): the trace id of the request and the gateway's server span.
 * Real servers send neither: a client must treat both as optional.
 */
export const ChainAnswerInfo = z.object({
  route: z.enum(['rag', 'agent', 'direct']),
  backend: z.enum(LLM_BACKENDS).optional(),
  /** The model asked for and the model that answered (they differ after a fallback, e.g. on GPU OOM). */
  requestedModel: z.string(),
  responseModel: z.string(),
  /** Ids of the documents retrieved for the answer, best first (RAG route; empty on the other routes). */
  documents: z.array(z.string()).default([]),
  /** Agent route: how the multi-step task ended (failed: a tool call failed, so the plan could not finish), how many
   *  tool calls it made and how many steps it took (plan + tool calls + answer). */
  agent: z
    .object({
      task: z.enum(['completed', 'failed']),
      toolCalls: z.number().int().nonnegative(),
      steps: z.number().int().nonnegative(),
    })
    .optional(),
});
export type ChainAnswerInfo = z.infer<typeof ChainAnswerInfo>;

/** `traceresponse` (W3C Trace Context Level 2): version 00, 32-hex trace id, 16-hex span id, 2-hex flags. */
export const TRACERESPONSE_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
