/**
 * Hop-to-hop calls: round-robin over the target's replicas, one CLIENT span per call with W3C traceparent and baggage
 * injected, undici keep-alive pools for plain links and a fresh TLS connection per call on TLS links (so each call
 * really handshakes). Timeouts and 5xx answers mark the client span as an error (`error.type`).
 */
import { SpanKind, SpanStatusCode, context, propagation, trace, type Span, type Tracer } from '@opentelemetry/api';
import { Agent, Pool, request, type Dispatcher } from 'undici';
import type { HopName } from './topology';
import { HopError } from './errors';
import { chainCert, tlsServerName } from './tls';

export interface Endpoint {
  pod: string;
  url: string;
  tlsUrl?: string;
}

/** Where each hop's replicas listen; filled in as the chain starts. */
export class Directory {
  private readonly entries = new Map<HopName, Endpoint[]>();
  private readonly cursor = new Map<HopName, number>();
  set(hop: HopName, eps: Endpoint[]): void {
    this.entries.set(hop, eps);
  }
  get(hop: HopName): Endpoint[] {
    return this.entries.get(hop) ?? [];
  }
  pick(hop: HopName, pod?: string): Endpoint {
    const eps = this.get(hop);
    if (!eps.length) throw new HopError(503, 'no_replica', `no replica of ${hop} is up`);
    if (pod) {
      const ep = eps.find((e) => e.pod === pod);
      if (ep) return ep;
    }
    const i = (this.cursor.get(hop) ?? 0) % eps.length;
    this.cursor.set(hop, i + 1);
    return eps[i];
  }
  all(): Array<[HopName, Endpoint[]]> {
    return [...this.entries];
  }
}

export interface CallResult {
  status: number;
  pod: string;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  span: Span;
  /** Ends the client span (call after consuming the body). */
  end(err?: Error): void;
}

export class HopClient {
  private readonly pools = new Map<string, Dispatcher>();
  /** One TLS agent per hop: the SNI server name is fixed per agent, and each hop answers to its own name. */
  private readonly tlsAgents = new Map<string, Agent>();

  constructor(
    private readonly directory: Directory,
    private readonly tracer: Tracer,
    private readonly tlsHops: string[],
    private readonly timeoutMs: number
  ) {}

  private dispatcher(origin: string, hop: string): Dispatcher {
    if (this.tlsHops.includes(hop)) {
      // No TLS session cache: every call is a full handshake (like a client that does not resume sessions), so the
      // `tls_slow_handshake` fault, applied in the server's SNI step that a resumed session skips, hits every call.
      let a = this.tlsAgents.get(hop);
      if (!a) {
        a = new Agent({
          connect: {
            ca: chainCert().cert,
            servername: tlsServerName(hop),
            rejectUnauthorized: true,
            maxCachedSessions: 0,
          },
        });
        this.tlsAgents.set(hop, a);
      }
      return a;
    }
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, { connections: 256, keepAliveTimeout: 20_000 });
      this.pools.set(origin, p);
    }
    return p;
  }

  /** POSTs JSON to a hop and returns the response with its client span still open (streaming-friendly). */
  async call(
    hop: HopName,
    path: string,
    body: unknown,
    opts: { pod?: string; timeoutMs?: number; spanName?: string } = {}
  ): Promise<CallResult> {
    const ep = this.directory.pick(hop, opts.pod);
    const useTls = this.tlsHops.includes(hop) && ep.tlsUrl;
    const base = useTls ? ep.tlsUrl! : ep.url;
    const u = new URL(path, base);
    const span = this.tracer.startSpan(opts.spanName ?? `POST ${path}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'url.full': u.toString(),
        'server.address': useTls ? tlsServerName(hop) : u.hostname,
        'server.port': Number(u.port),
        'peer.service': hop,
        'hopscope.peer.pod': ep.pod,
        ...(useTls ? { 'url.scheme': 'https' } : {}),
      },
    });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    propagation.inject(trace.setSpan(context.active(), span), headers);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    let ended = false;
    const end = (err?: Error): void => {
      if (ended) return;
      ended = true;
      if (err) {
        const isTimeout =
          err.name === 'TimeoutError' || err.name === 'AbortError' || /timeout|aborted/i.test(err.message);
        span.setAttribute('error.type', isTimeout ? 'timeout' : ((err as { code?: string }).code ?? err.name));
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: isTimeout ? `timeout after ${timeoutMs} ms calling ${hop}` : err.message,
        });
      }
      span.end();
    };
    try {
      const res = await request(u, {
        method: 'POST',
        headers,
        body: JSON.stringify(body ?? {}),
        dispatcher: this.dispatcher(u.origin, hop),
        signal: AbortSignal.timeout(timeoutMs),
        // A TLS link opens a new connection (a new handshake) per call, like a client without connection reuse.
        reset: Boolean(useTls),
      });
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) {
        span.setAttribute('error.type', String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.statusCode} from ${hop}` });
      }
      return { status: res.statusCode, pod: ep.pod, headers: res.headers, body: res.body, span, end };
    } catch (err) {
      end(err as Error);
      const e = err as Error;
      if (e.name === 'TimeoutError' || e.name === 'AbortError')
        throw new HopError(504, 'upstream_timeout', `${hop} did not answer within ${timeoutMs} ms`, 'timeout');
      throw new HopError(
        502,
        'upstream_unreachable',
        `${hop} (${ep.pod}) unreachable: ${e.message}`,
        (e as { code?: string }).code ?? 'connect_error'
      );
    }
  }

  /** A call whose JSON answer is read whole; non-2xx becomes a HopError carrying the downstream code. */
  async json<T = any>(
    hop: HopName,
    path: string,
    body: unknown,
    opts: { pod?: string; timeoutMs?: number; spanName?: string } = {}
  ): Promise<{ data: T; pod: string }> {
    const r = await this.call(hop, path, body, opts);
    try {
      const data = (await r.body.json()) as any;
      if (r.status >= 400) {
        const code = data?.error?.code ?? `http_${r.status}`;
        const type = code === 'timeout' || code === 'upstream_timeout' ? 'timeout' : code;
        r.end();
        throw new HopError(
          r.status >= 500 ? 502 : r.status,
          code,
          `${hop}: ${data?.error?.message ?? `HTTP ${r.status}`}`,
          type
        );
      }
      r.end();
      return { data: data as T, pod: r.pod };
    } catch (err) {
      if (err instanceof HopError) throw err;
      r.end(err as Error);
      const e = err as Error;
      if (e.name === 'TimeoutError' || e.name === 'AbortError')
        throw new HopError(504, 'upstream_timeout', `${hop} did not finish within the timeout`, 'timeout');
      throw new HopError(502, 'upstream_broken', `${hop}: ${e.message}`);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => {})));
    await Promise.all([...this.tlsAgents.values()].map((a) => a.close().catch(() => {})));
  }
}
