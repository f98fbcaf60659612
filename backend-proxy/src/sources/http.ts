/**
 * One way to call a source: a deadline per call, retries only for idempotent GETs on 503 or a network error,
 * and errors that name the source. A span wraps every call (`<source> <METHOD>`, a child of the request being
 * served) and a histogram times it; each attempt runs in that span's context, marked as a source call, so the
 * OpenTelemetry undici instrumentation (../telemetry.ts) gives it a CLIENT span and sends its W3C `traceparent`:
 * Grafana's trace reaches Prometheus, Tempo, the exporters and Alertmanager. Credentials registered for a source's
 * base URL (./auth) go into its requests' headers, and nowhere else.
 */
import { context, createContextKey, SpanStatusCode, trace } from '@opentelemetry/api';
import { EventEmitter } from 'node:events';
import { Agent, request } from 'undici';
import { sourceCalls, sourceLatency } from '../metrics';

/**
 * The most the proxy reads of one source answer. A broken or hostile source answering hundreds of MB must not take
 * the proxy's memory (a few such answers at once once took it past 1.5 GB); a trace that big is refused with a message.
 */
export const MAX_SOURCE_ANSWER_BYTES = 32 * 1024 * 1024;

/** One keep-alive pool for every source: undici's request is markedly cheaper than fetch per call. */
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64, maxResponseSize: MAX_SOURCE_ANSWER_BYTES });

export class SourceError extends Error {
  override name = 'SourceError';
  constructor(
    public source: string,
    message: string,
    public status?: number,
    public body?: unknown
  ) {
    super(`${source}: ${message}`);
  }
}

interface CallOptions {
  source: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Extra attempts for GETs on 503/network errors (POSTs never retry). */
  retries?: number;
  signal?: AbortSignal;
}

export interface CallResult<T> {
  status: number;
  body: T;
  latencyMs: number;
}

const tracer = trace.getTracer('hopscope-proxy');

/** Set (to the source's name) in the context of a source call's HTTP attempts: the undici instrumentation traces those only. */
export const SOURCE_CALL = createContextKey('hopscope.source_call');

/** Base URL → the headers that authenticate calls under it (registered by createSources for each configured source). */
const credentials = new Map<string, Record<string, string>>();

/**
 * Calls to URLs under `baseUrl` carry these headers (credentials, tenant). Keyed by URL, so every caller of
 * `callJson` (the Alertmanager push in ../alerts too) authenticates without handling secrets. Returns the undo.
 */
export function registerSourceHeaders(baseUrl: string, headers: Record<string, string>): () => void {
  if (!Object.keys(headers).length) return () => {};
  const base = baseUrl.replace(/\/+$/, '');
  credentials.set(base, headers);
  return () => {
    if (credentials.get(base) === headers) credentials.delete(base);
  };
}

function credentialsFor(url: string): Record<string, string> | undefined {
  if (!credentials.size) return undefined;
  for (const [base, h] of credentials) {
    if (url.startsWith(base) && (url.length === base.length || url[base.length] === '/' || url[base.length] === '?'))
      return h;
  }
  return undefined;
}
class TimeoutMarker extends Error {}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ACCEPT_JSON = { accept: 'application/json' };

/** undici takes an EventEmitter as a signal (documented): lighter than an AbortController's EventTarget per call. */
class Deadline extends EventEmitter {
  aborted = false;
  reason: unknown;
  abort(reason: unknown = new TimeoutMarker()): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}
function follow(outer: AbortSignal, d: Deadline): () => void {
  if (outer.aborted) {
    d.abort(outer.reason);
    return () => {};
  }
  const on = (): void => d.abort(outer.reason);
  outer.addEventListener('abort', on, { once: true });
  return () => outer.removeEventListener('abort', on);
}
/**
 * origin + path for undici's dispatcher API, skipping its per-call WHATWG URL parse, for URLs that parse to
 * themselves (plain host, no dot segments, characters already encoded as URLSearchParams writes them). Anything
 * else goes through undici's own `request(url)` as before.
 */
const PLAIN_URL = /^(https?:\/\/[a-z0-9.-]+(?::\d+)?)(\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*)$/;
function plainUrl(url: string): { origin: string; path: string } | undefined {
  const m = PLAIN_URL.exec(url);
  return m && !/\/\.\.?(?:[/?]|$)/.test(m[2]) ? { origin: m[1], path: m[2] } : undefined;
}

/** Fetches and parses JSON; a non-2xx answer is returned (not thrown) so callers can map recorded error shapes. */
export async function callJson<T = unknown>(url: string, o: CallOptions): Promise<CallResult<T>> {
  const method = o.method ?? 'GET';
  const retries = method === 'GET' ? (o.retries ?? 1) : 0;
  const started = performance.now();
  const deadline = started + o.timeoutMs;
  // Not startActiveSpan: only the HTTP attempts run in the span's context (callContext below), not the parsing.
  const span = tracer.startSpan(`${o.source} ${method}`, {
    attributes: { 'hopscope.source': o.source, 'http.request.method': method, 'url.full': url },
  });
  // One deadline timer for all attempts, cleared on return: AbortSignal.timeout per attempt left a live timer and
  // signal per call for the whole timeout (measured: ~100 µs of CPU per 6-query /api/golden).
  const signal = new Deadline();
  const timeout = setTimeout(() => signal.abort(), o.timeoutMs);
  timeout.unref();
  const stopFollowing = o.signal ? follow(o.signal, signal) : undefined;
  const plain = plainUrl(url);
  // The source's credentials; none: the shared constant. The traceparent is the undici instrumentation's to add.
  const auth = credentialsFor(url);
  const headers = o.headers || auth ? { accept: 'application/json', ...auth, ...o.headers } : ACCEPT_JSON;
  const callContext = trace.setSpan(context.active(), span).setValue(SOURCE_CALL, o.source);
  let lastErr: unknown;
  try {
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (deadline - performance.now() <= 0) break;
      try {
        const res = await context.with(callContext, () =>
          plain
            ? agent.request({ origin: plain.origin, path: plain.path, method, headers, body: o.body, signal })
            : request(url, { method, headers, body: o.body, signal, dispatcher: agent })
        );
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
          try {
            body = JSON.parse(text);
          } catch {
            throw new SourceError(o.source, `answered invalid JSON (HTTP ${status})`, status);
          }
        } else if (text) {
          try {
            body = JSON.parse(text);
          } catch {
            /* keep text */
          }
        }
        const latencyMs = performance.now() - started;
        span.setAttribute('http.response.status_code', status);
        sourceCalls.inc({ source: o.source, outcome: status < 400 ? 'ok' : `http_${status}` });
        sourceLatency.observe({ source: o.source }, latencyMs / 1000);
        return { status, body: body as T, latencyMs };
      } catch (err) {
        if (err instanceof SourceError) throw err;
        lastErr = err;
        const e = err as Error & { code?: string };
        if (e.code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
          throw new SourceError(
            o.source,
            `answered more than ${MAX_SOURCE_ANSWER_BYTES / 1048576} MiB; the proxy reads at most that of one answer`
          );
        if (signal.aborted || e.name === 'TimeoutError' || e.name === 'AbortError') {
          lastErr = new TimeoutMarker();
          break;
        }
        if (attempt < retries) await sleep(Math.min(100 * 2 ** attempt, Math.max(0, deadline - performance.now())));
      }
    }
    const e = lastErr as (Error & { code?: string; cause?: { code?: string; message?: string } }) | undefined;
    if (lastErr instanceof SourceError) throw lastErr;
    const msg =
      !e || e instanceof TimeoutMarker
        ? `no answer within ${o.timeoutMs} ms (deadline)`
        : `unreachable (${e.code ?? e.cause?.code ?? e.cause?.message ?? e.message})`;
    throw new SourceError(o.source, msg);
  } catch (err) {
    sourceCalls.inc({ source: o.source, outcome: 'error' });
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    clearTimeout(timeout);
    stopFollowing?.();
    span.end();
  }
}

/** Runs `fn` and turns its outcome into the contract's per-source status, never throwing. */
export async function settle<T>(
  source: string,
  fn: () => Promise<T>
): Promise<{ value?: T; status: { source: string; ok: boolean; latencyMs: number; error?: string } }> {
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
