import { z } from 'zod';

/**
 * What the simulated chain's gateway adds to an OpenAI-compatible chat answer, so a load generator can grade quality
 * (RAG recall, agent task completion) and see degradations (a fallback model) without reading traces:
 * - non-streaming: a top-level `hopscope` field of the `chat.completion` object;
 * - streaming: one `chat.completion.chunk` with `choices: []` and the `hopscope` field, just before `data: [DONE]`.
 * The gateway also answers a W3C Trace Context Level 2 `traceresponse: 00-<trace-id>-<span-id>-<flags>` header.
 * Real servers send neither: a client must treat both as optional.
 */
export const ChainAnswerInfo = z.object({
  route: z.enum(['rag', 'agent', 'direct']),
  backend: z.enum(['vllm', 'tgi']).optional(),
  /** The model asked for and the model that answered (they differ after a fallback, e.g. on GPU OOM). */
  requestedModel: z.string(),
  responseModel: z.string(),
  /** Ids of the documents retrieved for the answer (RAG route; empty on a vector-cache hit without ids). */
  documents: z.array(z.string()).default([]),
  /** Agent route: how the multi-step task ended and how many tool calls it took. */
  agent: z.object({ task: z.enum(['completed', 'failed']), toolCalls: z.number().int().nonnegative(), steps: z.number().int().nonnegative() }).optional(),
});
export type ChainAnswerInfo = z.infer<typeof ChainAnswerInfo>;
