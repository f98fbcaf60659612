/**
 * OpenAI-style SSE streams through the chain: relaying an upstream stream to our client chunk by chunk (tallying what
 * went through), and ending a stream with the chain's answer-info chunk before `data: [DONE]`. A relay never writes
 * `[DONE]` itself: whoever relays ends the stream, so each hop can add what it knows (the agent its task outcome, the
 * gateway the whole ChainAnswerInfo).
 */
import type { ServerResponse } from 'node:http';
import { SseParser } from '../shared/sse';
import type { CallResult } from './client';

export interface RelayStats {
  contentChunks: number;
  firstChunkMs?: number;
  chunkTimes: number[];
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
  finishReason?: string;
  /** The stream's id, created and model (the closing chunk repeats them: OpenAI clients group chunks by id). */
  id?: string;
  created?: number;
  model?: string;
  /** The `hopscope` field of an upstream answer-info chunk (the agent's), taken out of the stream. */
  info?: Record<string, unknown>;
  done: boolean;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

export async function relayChatStream(up: CallResult, res: ServerResponse, keepUsage: boolean): Promise<RelayStats> {
  const stats: RelayStats = { contentChunks: 0, chunkTimes: [], done: false };
  const parser = new SseParser();
  if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
  const handle = (data: string): void => {
    if (data === '[DONE]') {
      stats.done = true;
      return;
    }
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch {
      return;
    }
    stats.id ??= ev.id;
    stats.created ??= ev.created;
    stats.model ??= ev.model;
    const choice = ev.choices?.[0];
    if (!choice && ev.hopscope && typeof ev.hopscope === 'object') {
      stats.info = ev.hopscope;
      return;
    }
    if (ev.usage) stats.usage = ev.usage;
    if (choice?.delta?.content) {
      const now = performance.now();
      stats.firstChunkMs ??= now;
      stats.chunkTimes.push(now);
      stats.contentChunks++;
    }
    if (choice?.finish_reason) stats.finishReason = choice.finish_reason;
    if (!choice && ev.usage && !keepUsage) return;
    res.write(`data: ${data}\n\n`);
  };
  for await (const chunk of up.body) for (const d of parser.push(chunk.toString())) handle(d);
  for (const d of parser.flush()) handle(d);
  return stats;
}

/** Ends a relayed stream: the answer-info chunk (when there is one), then `data: [DONE]`. */
export function endChatStream(
  res: ServerResponse,
  meta: Pick<RelayStats, 'id' | 'created' | 'model'>,
  info?: unknown
): void {
  if (info !== undefined) {
    res.write(
      `data: ${JSON.stringify({ id: meta.id, object: 'chat.completion.chunk', created: meta.created ?? Math.floor(Date.now() / 1000), model: meta.model, choices: [], hopscope: info })}\n\n`
    );
  }
  res.end('data: [DONE]\n\n');
}
