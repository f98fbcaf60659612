/**
 * Prometheus (or Mimir/Thanos) over its HTTP API. Maps the recorded error shapes (bad_data 400, execution 422,
 * timeout 503, text/plain 404/405) to one clear per-source message; NaN/Inf values become null (no data).
 */
import { callJson, SourceError } from './http';

export interface PromSeries {
  metric: Record<string, string>;
  points: Array<[number, number | null]>;
}

interface PromEnvelope {
  status?: 'success' | 'error';
  errorType?: string;
  error?: string;
  warnings?: string[];
  data?: { resultType: string; result: unknown };
}

export class PrometheusSource {
  readonly name = 'prometheus';
  constructor(
    public baseUrl: string,
    private timeoutMs: number
  ) {}

  /** Identical queries in flight share one call: many dashboards on the same range cost Prometheus one query. */
  private inflight = new Map<string, Promise<PromEnvelope>>();

  private get(path: string, params: Record<string, string>, timeoutMs = this.timeoutMs): Promise<PromEnvelope> {
    const url = `${this.baseUrl}${path}?${new URLSearchParams(params)}`;
    let p = this.inflight.get(url);
    if (!p) {
      p = callJson<PromEnvelope | string>(url, { source: this.name, timeoutMs, retries: 1 }).then((r) =>
        interpret(r.status, r.body)
      );
      this.inflight.set(url, p);
      const drop = (): void => {
        this.inflight.delete(url);
      };
      p.then(drop, drop);
    }
    return p;
  }

  /** Range query; timestamps in ms, step in ms. Prometheus gets its own evaluation timeout just under our deadline. */
  async queryRange(query: string, fromMs: number, toMs: number, stepMs: number): Promise<PromSeries[]> {
    const env = await this.get('/api/v1/query_range', {
      query,
      start: (fromMs / 1000).toFixed(3),
      end: (toMs / 1000).toFixed(3),
      step: `${stepMs / 1000}`,
      timeout: `${Math.max(1, Math.floor(this.timeoutMs * 0.9))}ms`,
    });
    if (env.data?.resultType !== 'matrix' || !Array.isArray(env.data.result))
      throw new SourceError(this.name, `expected a matrix, got ${env.data?.resultType}`);
    return env.data.result.map((s: unknown) => {
      const x = s as { metric?: unknown; values?: unknown } | null;
      if (!x || typeof x !== 'object' || !Array.isArray(x.values ?? [])) throw malformed('matrix');
      return { metric: labels(x.metric), points: ((x.values ?? []) as unknown[]).map(point) };
    });
  }

  async query(query: string, atMs?: number): Promise<PromSeries[]> {
    const params: Record<string, string> = { query, timeout: `${Math.max(1, Math.floor(this.timeoutMs * 0.9))}ms` };
    if (atMs !== undefined) params.time = (atMs / 1000).toFixed(3);
    const env = await this.get('/api/v1/query', params);
    const d = env.data;
    if (d?.resultType === 'vector' && Array.isArray(d.result)) {
      return d.result.map((s: unknown) => {
        const x = s as { metric?: unknown; value?: unknown } | null;
        if (!x || typeof x !== 'object') throw malformed('vector');
        return { metric: labels(x.metric), points: [point(x.value)] };
      });
    }
    if (d?.resultType === 'scalar') return [{ metric: {}, points: [point(d.result)] }];
    throw new SourceError(this.name, `unexpected result type ${d?.resultType}`);
  }

  async health(): Promise<void> {
    const env = await this.get('/api/v1/status/buildinfo', {}, Math.min(this.timeoutMs, 2000));
    if (env.status !== 'success') throw new SourceError(this.name, 'buildinfo did not answer success');
  }
}

const malformed = (what: string): SourceError =>
  new SourceError('prometheus', `answered a malformed ${what} (not the Prometheus HTTP API's shape)`);

/** `[unix seconds, "value"]`, checked: a broken or foreign server's answer is a per-source error, not a TypeError. */
function point(p: unknown): [number, number | null] {
  if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'number' || !Number.isFinite(p[0]))
    throw malformed('sample');
  return [Math.round(p[0] * 1000), num(String(p[1]))];
}

function labels(m: unknown): Record<string, string> {
  if (m === undefined || m === null) return {};
  if (typeof m !== 'object' || Array.isArray(m)) throw malformed('label set');
  return m as Record<string, string>;
}

function num(v: string): number | null {
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Turns an HTTP answer from Prometheus into data or a SourceError with Prometheus' own reason. */
function interpret(status: number, body: unknown): PromEnvelope {
  if (typeof body === 'string' || body === null || typeof body !== 'object') {
    const text = String(body ?? '')
      .trim()
      .slice(0, 200);
    if (status === 404)
      throw new SourceError(
        'prometheus',
        `HTTP 404 (${text || 'not found'}): is the URL a Prometheus API base?`,
        status
      );
    if (status === 405) throw new SourceError('prometheus', `HTTP 405 (${text}): method not allowed`, status);
    if (status >= 200 && status < 300)
      throw new SourceError('prometheus', 'answered something that is not JSON', status);
    throw new SourceError('prometheus', `HTTP ${status}: ${text}`, status);
  }
  const env = body as PromEnvelope;
  if (env.status === 'error' || status >= 400) {
    const kind = env.errorType ?? `http_${status}`;
    const what =
      kind === 'bad_data'
        ? 'rejected the query'
        : kind === 'execution'
          ? 'could not evaluate the query'
          : kind === 'timeout'
            ? 'timed out evaluating the query'
            : kind === 'canceled'
              ? 'canceled the query'
              : 'failed';
    throw new SourceError('prometheus', `${what} (${kind}, HTTP ${status}): ${env.error ?? 'no message'}`, status, env);
  }
  return env;
}
