/** Builds OTLP JSON bodies for proxy tests (hex ids, nanosecond strings), and a tiny fixture-replay HTTP server. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpanSpec {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  pod?: string;
  startMs: number;
  durMs: number;
  status?: 0 | 1 | 2;
  statusMessage?: string;
  kind?: number;
  attrs?: Record<string, string | number | boolean>;
}

const av = (v: string | number | boolean): Record<string, unknown> =>
  typeof v === 'string'
    ? { stringValue: v }
    : typeof v === 'boolean'
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: String(v) }
        : { doubleValue: v };

export function otlp(spans: SpanSpec[]): { resourceSpans: unknown[] } {
  const byRes = new Map<string, SpanSpec[]>();
  for (const s of spans) {
    const k = `${s.service}|${s.pod ?? ''}`;
    byRes.set(k, [...(byRes.get(k) ?? []), s]);
  }
  return {
    resourceSpans: [...byRes.values()].map((list) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: list[0].service } },
          ...(list[0].pod ? [{ key: 'k8s.pod.name', value: { stringValue: list[0].pod } }] : []),
        ],
      },
      scopeSpans: [
        {
          scope: { name: 'test' },
          spans: list.map((s) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            kind: s.kind ?? 2,
            startTimeUnixNano: `${BigInt(Math.round(s.startMs * 1000)) * 1000n}`,
            endTimeUnixNano: `${BigInt(Math.round((s.startMs + s.durMs) * 1000)) * 1000n}`,
            attributes: Object.entries(s.attrs ?? {}).map(([key, v]) => ({ key, value: av(v) })),
            status: s.status ? { code: s.status, ...(s.statusMessage ? { message: s.statusMessage } : {}) } : {},
          })),
        },
      ],
    })),
  };
}

export const hex = (n: number, len: number): string => n.toString(16).padStart(len, '0');

/** A chain-shaped trace: gateway → rag → llm, with the llm hop's duration given. */
export function chainTrace(i: number, startMs: number, llmMs: number, status: 0 | 1 | 2 = 1): SpanSpec[] {
  const t = hex(i + 1, 32);
  return [
    {
      traceId: t,
      spanId: hex(i * 10 + 1, 16),
      name: 'POST /v1/chat',
      service: 'gateway',
      pod: 'gateway-0',
      startMs,
      durMs: llmMs + 30,
      status,
    },
    {
      traceId: t,
      spanId: hex(i * 10 + 2, 16),
      parentSpanId: hex(i * 10 + 1, 16),
      name: 'rag.retrieve',
      service: 'rag',
      pod: 'rag-0',
      startMs: startMs + 5,
      durMs: 10,
      status: 1,
    },
    {
      traceId: t,
      spanId: hex(i * 10 + 3, 16),
      parentSpanId: hex(i * 10 + 1, 16),
      name: 'chat llama',
      service: 'llm-vllm',
      pod: 'llm-vllm-0',
      startMs: startMs + 20,
      durMs: llmMs,
      status,
      attrs: { model: 'llama-3-8b', prompt_tokens: 700 },
    },
  ];
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

/** Listens on port 0; `handler` answers. */
export async function tinyServer(handler: Handler): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void Promise.resolve(handler(req, res, Buffer.concat(chunks))).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
