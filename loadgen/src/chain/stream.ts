/** Relays an upstream OpenAI-style SSE stream to our client, chunk by chunk, and tallies what went through. */
import type { ServerResponse } from 'node:http';
import { SseParser } from '../load/sse';
import type { CallResult } from './client';

export interface RelayStats {
  contentChunks: number;
  firstChunkMs?: number;
  chunkTimes: number[];
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
  finishReason?: string;
  model?: string;
  done: boolean;
}

export async function relayChatStream(up: CallResult, res: ServerResponse, keepUsage: boolean): Promise<RelayStats> {
  const stats: RelayStats = { contentChunks: 0, chunkTimes: [], done: false };
  const parser = new SseParser();
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const handle = (data: string): void => {
    if (data === '[DONE]') {
      stats.done = true;
      res.write('data: [DONE]\n\n');
      return;
    }
    let ev: any;
    try { ev = JSON.parse(data); } catch { return; }
    stats.model ??= ev.model;
    if (ev.usage) stats.usage = ev.usage;
    const choice = ev.choices?.[0];
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
