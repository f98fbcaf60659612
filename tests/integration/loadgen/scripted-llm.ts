/**
 * A scripted OpenAI-compatible streaming endpoint with known timings, for the load generator's tests: TTFT, then a
 * token every `gapMs`; answers a W3C `traceresponse` (each id it issued is kept) unless asked not to.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedLlm {
  url: string;
  requests: number;
  traceIds: Set<string>;
  baggage: string[];
  close(): Promise<void>;
}

export async function startScriptedLlm(
  o: { ttftMs?: number; gapMs?: number; tokens?: number; traceresponse?: boolean } = {}
): Promise<ScriptedLlm> {
  const ttft = o.ttftMs ?? 20,
    gap = o.gapMs ?? 5,
    tokens = o.tokens ?? 4;
  const state = { requests: 0, traceIds: new Set<string>(), baggage: [] as string[] };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.requests++;
      if (state.baggage.length < 1000) state.baggage.push(String(req.headers.baggage ?? ''));
      const headers: Record<string, string> = { 'content-type': 'text/event-stream' };
      if (o.traceresponse !== false) {
        const id = randomBytes(16).toString('hex');
        state.traceIds.add(id);
        headers.traceresponse = `00-${id}-${randomBytes(8).toString('hex')}-01`;
      }
      res.writeHead(200, headers);
      let i = 0;
      const tick = (): void => {
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `t${i} ` } }] })}\n\n`);
        if (++i < tokens) setTimeout(tick, gap);
        else
          res.end(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: tokens } })}\n\ndata: [DONE]\n\n`);
      };
      setTimeout(tick, ttft);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    traceIds: state.traceIds,
    baggage: state.baggage,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
