/**
 * One way to call a source: a deadline per call, retries only for idempotent GETs on 503 or a network error,
 * and errors that name the source. A span wraps every call and a histogram times it.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { Agent, request } from 'undici';
import { sourceCalls, sourceLatency } from '../metrics';

/** One keep-alive pool for every source: undici's request is markedly cheaper than fetch per call. */
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });

export class SourceError extends Error {
  override name = 'SourceError';
  constructor(public source: string, message: string, public status?: number, public body?: unknown) {
    super(`${source}: ${message}`);
  }
}

export interface CallOptions {
  source: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Extra attempts for GETs on 503/network errors (POSTs never retry). */
  retries?: number;
  signal?: AbortSignal;
}

export interface CallResult<T> { status: number; body: T; latencyMs: number }

const tracer = trace.getTracer('hopscope-proxy');
class TimeoutMarker extends Error {}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Fetches and parses JSON; a non-2xx answer is returned (not thrown) so callers can map recorded error shapes. */
export async function callJson<T = unknown>(url: string, o: CallOptions): Promise<CallResult<T>> {
  const method = o.method ?? 'GET';
  const retries = method === 'GET' ? (o.retries ?? 1) : 0;
  const started = performance.now();
  const deadline = started + o.timeoutMs;
  return tracer.startActiveSpan(`${o.source} ${method}`, { attributes: { 'hopscope.source': o.source, 'http.request.method': method, 'url.full': url } }, async (span) => {
    let lastErr: unknown;
    try {
      for (let attempt = 0; attempt <= retries; attempt++) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        let signal: AbortSignal | undefined;
        try {
          signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(Math.ceil(left))]) : AbortSignal.timeout(Math.ceil(left));
          const res = await request(url, { method, headers: { accept: 'application/json', ...o.headers }, body: o.body, signal, dispatcher: agent });
          const text = await res.body.text();
          const status = res.statusCode;
          const ctype = String(res.headers['content-type'] ?? '');
          if (status === 503 && attempt < retries) {
            lastErr = new SourceError(o.source, `HTTP 503 ${text.slice(0, 200)}`, 503);
            await sleep(Math.min(100 * 2 ** attempt, Math.max(0, deadline - performance.now())));
            continue;
          }
          let body: unknown = text;
          if (text && ctype.includes('json')) {
            try { body = JSON.parse(text); } catch { throw new SourceError(o.source, `answered invalid JSON (HTTP ${status})`, status); }
          } else if (text) {
            try { body = JSON.parse(text); } catch { /* keep text */ }
          }
          const latencyMs = performance.now() - started;
          span.setAttribute('http.response.status_code', status);
          sourceCalls.inc({ source: o.source, outcome: status < 400 ? 'ok' : `http_${status}` });
          sourceLatency.observe({ source: o.source }, latencyMs / 1000);
          return { status, body: body as T, latencyMs };
        } catch (err) {
          if (err instanceof SourceError) throw err;
          lastErr = err;
          const e = err as Error;
          if (signal?.aborted || e.name === 'TimeoutError' || e.name === 'AbortError') { lastErr = new TimeoutMarker(); break; }
          if (attempt < retries) await sleep(Math.min(100 * 2 ** attempt, Math.max(0, deadline - performance.now())));
        }
      }
      const e = lastErr as (Error & { code?: string; cause?: { code?: string; message?: string } }) | undefined;
      if (lastErr instanceof SourceError) throw lastErr;
      const msg = !e || e instanceof TimeoutMarker
        ? `no answer within ${o.timeoutMs} ms (deadline)`
        : `unreachable (${e.code ?? e.cause?.code ?? e.cause?.message ?? e.message})`;
      throw new SourceError(o.source, msg);
    } catch (err) {
      sourceCalls.inc({ source: o.source, outcome: 'error' });
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Runs `fn` and turns its outcome into the contract's per-source status, never throwing. */
export async function settle<T>(source: string, fn: () => Promise<T>): Promise<{ value?: T; status: { source: string; ok: boolean; latencyMs: number; error?: string } }> {
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, status: { source, ok: true, latencyMs: round(performance.now() - t0) } };
  } catch (err) {
    const e = err as Error;
    const msg = e instanceof SourceError ? e.message : `${source}: ${e.message}`;
    return { status: { source, ok: false, latencyMs: round(performance.now() - t0), error: msg } };
  }
}

const round = (n: number): number => Math.round(n * 10) / 10;
