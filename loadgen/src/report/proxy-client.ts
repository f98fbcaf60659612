/**
 * HTTP calls to the backend proxy's run API (`contract/runs.ts`), with the token from `$HOPSCOPE_PROXY_TOKEN`.
 * `send` retries what may pass later — network errors, 429, 502, 503, 504 — with exponential backoff and jitter,
 * honouring Retry-After, until a deadline; every other answer is returned as it is.
 */

export interface ProxyAnswer {
  status: number;
  body: unknown;
  retryAfterMs?: number;
}

/** The proxy could not be reached (network error or timeout), or kept answering "later" until the deadline. */
export class ProxyUnavailable extends Error {
  override name = 'ProxyUnavailable';
  constructor(
    message: string,
    readonly last?: ProxyAnswer
  ) {
    super(message);
  }
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/** Retry-After: seconds, or an HTTP date. */
export function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** `{error: {message}}` of an answer, or its status. */
export function answerMessage(a: ProxyAnswer): string {
  const m = (a.body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof m === 'string' ? `${a.status}: ${m}` : `HTTP ${a.status}`;
}

export class ProxyClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
    private readonly timeoutMs = 5000
  ) {}

  /** One call; throws ProxyUnavailable on a network error or timeout. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ProxyAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'hopscope-load/0.1' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError'
          ? `no answer within ${this.timeoutMs} ms`
          : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new ProxyUnavailable(`the proxy at ${this.baseUrl} is unreachable (${why})`);
    }
    const text = await res.text().catch(() => '');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, retryAfterMs: retryAfterMs(res.headers.get('retry-after')) };
  }

  /**
   * Retries until `deadline` (performance.now() ms) what may pass later; returns the first other answer. Throws
   * ProxyUnavailable when the deadline passes first.
   */
  async send(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    deadline: number,
    onRetry?: (why: string, waitMs: number) => void
  ): Promise<ProxyAnswer> {
    let backoff = 250;
    for (let attempt = 1; ; attempt++) {
      let why: string;
      // Jitter, so that workers of one run that failed together do not retry together; never below a Retry-After.
      let wait = backoff * (0.8 + 0.4 * Math.random());
      let last: ProxyAnswer | undefined;
      try {
        const a = await this.call(method, path, body);
        if (!RETRYABLE.has(a.status)) return a;
        last = a;
        why = answerMessage(a);
        if (a.retryAfterMs !== undefined) wait = a.retryAfterMs * (1 + 0.2 * Math.random());
      } catch (err) {
        if (!(err instanceof ProxyUnavailable)) throw err;
        why = err.message;
      }
      backoff = Math.min(8000, backoff * 2);
      wait = Math.min(wait, 30_000);
      if (performance.now() + wait > deadline)
        throw new ProxyUnavailable(`${why} (gave up after ${attempt} attempt(s))`, last);
      onRetry?.(why, wait);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
