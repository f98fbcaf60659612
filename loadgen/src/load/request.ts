/**
 * One request of a run: sends it (baggage, traceparent, route and backend headers), reads an OpenAI-style SSE stream
 * for TTFT and inter-token gaps (or a JSON answer), grades the answer, and says how it ended — never throws.
 */
import type { Pool } from 'undici';
import type { RequestOutcome } from '../../../contract/runs';
import { errorCode } from '../shared/errors';
import { SseParser } from '../shared/sse';
import { answerInfo, gradeAnswer } from './answer';
import type { Deadlines } from './deadlines';
import { ROUTE_HEADER, type PlannedRequest } from './mix';
import { newTraceparent, parseTraceresponse, type TraceIdSource } from './trace-context';

/** What one request needs from its run; built once per run. */
export interface RequestContext {
  pool: Pool;
  url: URL;
  method: 'POST' | 'GET';
  stream: boolean;
  maxTokens: number;
  timeoutMs: number;
  /** W3C baggage marking the run's traffic. */
  baggage: string;
  traceparent: boolean;
  /** Share of the traceparents sent sampled (1: all). */
  traceSample: number;
  apiKey?: string;
  rawBody?: string;
  deadlines: Deadlines;
}

export interface Outcome {
  outcome: RequestOutcome | 'interrupted';
  kind?: string;
  detail?: string;
  latencyMs: number;
  ttftMs?: number;
  tokens: number;
  itl: number[];
  key: string;
  traceId: string | null;
  traceIdSource: TraceIdSource;
  sampled: boolean;
  /** The server answered (any status): the headers came back. */
  answered: boolean;
  recall?: number;
  agentTask?: 'completed' | 'failed';
  /** The model that answered, when the server said (the chain's answer info). */
  responseModel?: string;
}

/** Reason given to requests cut short by an interrupt (Ctrl-C), so they are not taken for timeouts. */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
}

function errorKind(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  if (e.name === 'InterruptedError') return 'interrupted';
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.code ?? e.cause?.code ?? e.name ?? 'error';
}

export async function sendRequest(c: RequestContext, p: PlannedRequest): Promise<Outcome> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    baggage: c.baggage,
    'user-agent': 'hopscope-load/0.1',
  };
  if (c.apiKey) headers.authorization = `Bearer ${c.apiKey}`;
  let traceId: string | null = null;
  let traceIdSource: TraceIdSource = 'none';
  let sampled = false;
  let answered = false;
  if (c.traceparent) {
    const tp = newTraceparent(c.traceSample);
    headers.traceparent = tp.header;
    ({ traceId, sampled } = tp);
    traceIdSource = 'sent';
  }
  if (p.backend !== 'none') headers['x-hopscope-backend'] = p.backend;
  headers['x-hopscope-route'] = ROUTE_HEADER[p.route];
  const key = `${p.backend}/${p.model}/${p.route}`;
  let body: string | undefined;
  if (c.method === 'POST') {
    body =
      c.rawBody ??
      JSON.stringify({
        model: p.model,
        messages: p.messages,
        max_tokens: c.maxTokens,
        stream: c.stream,
        ...(c.stream ? { stream_options: { include_usage: true } } : {}),
      });
  }
  const t0 = performance.now();
  const base = (): Pick<Outcome, 'key' | 'traceId' | 'traceIdSource' | 'sampled' | 'answered'> => ({
    key,
    traceId,
    traceIdSource,
    sampled,
    answered,
  });
  let deadline: { at: number; ac: AbortController } | undefined;
  try {
    const ac = new AbortController();
    deadline = { at: t0 + c.timeoutMs, ac };
    c.deadlines.add(deadline);
    const res = await c.pool.request({
      path: c.url.pathname + c.url.search,
      method: c.method,
      headers,
      body,
      signal: ac.signal,
    });
    answered = true;
    // The server's word on the trace wins: it may have started its own trace instead of continuing ours.
    const tr = parseTraceresponse(res.headers.traceresponse);
    if (tr) {
      traceId = tr.traceId;
      sampled = tr.sampled;
      traceIdSource = 'traceresponse';
    }
    if (res.statusCode >= 400) {
      const code = errorCode(await res.body.text().catch(() => ''));
      const kind = `http_${res.statusCode}`;
      return {
        ...base(),
        outcome: 'error',
        kind,
        detail: code ? `${kind} ${code}` : kind,
        latencyMs: performance.now() - t0,
        tokens: 0,
        itl: [],
      };
    }
    const ctype = String(res.headers['content-type'] ?? '');
    if (!ctype.includes('text/event-stream')) {
      // A fixed raw body (benchmarks against trivial endpoints) has no usage to read: drain without decoding.
      if (c.rawBody !== undefined) {
        await res.body.dump();
        return { ...base(), outcome: 'ok', latencyMs: performance.now() - t0, tokens: 0, itl: [] };
      }
      const text = await res.body.text();
      let json: any;
      if (text.startsWith('{')) {
        try {
          json = JSON.parse(text);
        } catch {
          /* not JSON */
        }
      }
      const g = gradeAnswer(answerInfo(json), p.expected);
      return {
        ...base(),
        outcome: g.degraded ? 'degraded' : 'ok',
        detail: g.detail,
        recall: g.recall,
        agentTask: g.agentTask,
        responseModel: g.responseModel,
        latencyMs: performance.now() - t0,
        tokens: json?.usage?.completion_tokens ?? 0,
        itl: [],
      };
    }
    return { ...base(), ...(await readStream(res.body, t0, p)) };
  } catch (err) {
    const kind = errorKind(err);
    if (kind === 'interrupted')
      return { ...base(), outcome: 'interrupted', latencyMs: performance.now() - t0, tokens: 0, itl: [] };
    return {
      ...base(),
      outcome: kind === 'timeout' ? 'timeout' : 'error',
      kind,
      latencyMs: performance.now() - t0,
      tokens: 0,
      itl: [],
    };
  } finally {
    if (deadline) c.deadlines.delete(deadline);
  }
}

type StreamOutcome = Omit<Outcome, 'key' | 'traceId' | 'traceIdSource' | 'sampled' | 'answered'>;

/** An OpenAI-style SSE stream: the first content chunk is TTFT, the gaps between content chunks the ITL. */
async function readStream(body: AsyncIterable<Buffer>, t0: number, p: PlannedRequest): Promise<StreamOutcome> {
  const parser = new SseParser();
  let first: number | undefined,
    last: number | undefined,
    chunks = 0,
    usageTokens: number | undefined,
    done = false,
    info: unknown;
  const gaps: number[] = [];
  const onData = (d: string): void => {
    if (d === '[DONE]') {
      done = true;
      return;
    }
    let ev: any;
    try {
      ev = JSON.parse(d);
    } catch {
      return;
    }
    if (ev.usage?.completion_tokens !== undefined) usageTokens = ev.usage.completion_tokens;
    if (ev.hopscope !== undefined) info = ev;
    const content = ev.choices?.[0]?.delta?.content ?? ev.choices?.[0]?.text ?? ev.token?.text;
    if (content) {
      const now = performance.now();
      if (first === undefined) first = now;
      else gaps.push(now - last!);
      last = now;
      chunks++;
    }
  };
  for await (const c of body) for (const d of parser.push(c.toString())) onData(d);
  for (const d of parser.flush()) onData(d);
  const end = performance.now();
  if (!done) return { outcome: 'error', kind: 'stream_incomplete', latencyMs: end - t0, tokens: chunks, itl: [] };
  const g = gradeAnswer(answerInfo(info), p.expected);
  return {
    outcome: g.degraded ? 'degraded' : 'ok',
    detail: g.detail,
    recall: g.recall,
    agentTask: g.agentTask,
    responseModel: g.responseModel,
    latencyMs: end - t0,
    ttftMs: first !== undefined ? first - t0 : undefined,
    tokens: usageTokens ?? chunks,
    itl: gaps,
  };
}
