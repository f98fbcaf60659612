/**
 * The bpf-exporters (one per node): kernel events and health. Every node is asked in parallel with its own
 * deadline; one hanging node yields a per-source error, the others' events still arrive. With a token
 * (HOPSCOPE_EXPORTER_TOKEN = the exporters' HOPSCOPE_BPF_TOKEN) every call carries it as a bearer token; a refusal
 * is a per-source error that names the setting.
 */
import { KernelEvent, KernelEventType } from '../../../contract';
import { callJson, settle, SourceError } from './http';
import type { SourceStatus } from '../../../contract';

interface EventQuery {
  from: number;
  to: number;
  pod?: string;
  pid?: number;
  type?: KernelEventType;
  traceId?: string;
  limit?: number;
}

const TYPES = new Set<string>(KernelEventType.options);
/** The exporter's own caps (bpf-exporter config defaults): asking for more is a 400 there, so ask within them and
 *  report the answer as truncated instead. */
export const EXPORTER_MAX_EVENTS = 10_000;
const EXPORTER_MAX_RANGE_MS = 24 * 3600_000;
const TRACE_ID = /^[0-9a-f]{32}$/;

/** The KernelEvent schema as plain checks: zod on 10,000 events costs tens of ms per root-cause call. */
export function looksValid(e: unknown): e is KernelEvent {
  if (typeof e !== 'object' || e === null) return false;
  const x = e as Record<string, unknown>;
  return (
    typeof x.ts === 'number' &&
    Number.isFinite(x.ts) &&
    typeof x.type === 'string' &&
    TYPES.has(x.type) &&
    typeof x.pid === 'number' &&
    Number.isInteger(x.pid) &&
    x.pid >= 0 &&
    typeof x.comm === 'string' &&
    (x.mode === 'live' || x.mode === 'replay') &&
    typeof x.detail === 'object' &&
    x.detail !== null &&
    !Array.isArray(x.detail) &&
    (x.pod === undefined || typeof x.pod === 'string') &&
    (x.namespace === undefined || typeof x.namespace === 'string') &&
    (x.node === undefined || typeof x.node === 'string') &&
    (x.durationMs === undefined || (typeof x.durationMs === 'number' && x.durationMs >= 0)) &&
    (x.traceId === undefined || (typeof x.traceId === 'string' && TRACE_ID.test(x.traceId))) &&
    (x.seq === undefined || (typeof x.seq === 'number' && Number.isInteger(x.seq) && x.seq >= 0)) &&
    (x.notable === undefined || typeof x.notable === 'boolean') &&
    (x.labels === undefined || stringRecord(x.labels))
  );
}

function stringRecord(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const k in v) if (typeof (v as Record<string, unknown>)[k] !== 'string') return false;
  return true;
}

/** Why an exporter answered 401/403, for the per-source status: the setting to fix, never the token. */
function refused(what: string, status: number, token: string | undefined): string {
  return token
    ? `${what}: HTTP ${status}: the exporter refused the proxy's HOPSCOPE_EXPORTER_TOKEN (it must equal the exporter's HOPSCOPE_BPF_TOKEN)`
    : `${what}: HTTP ${status}: the exporter requires a token: set HOPSCOPE_EXPORTER_TOKEN to its HOPSCOPE_BPF_TOKEN`;
}

export class ExporterSource {
  readonly name: string;
  private readonly headers?: Record<string, string>;
  constructor(
    public baseUrl: string,
    private timeoutMs: number,
    private token?: string
  ) {
    this.name = `bpf-exporter ${new URL(baseUrl).host}`;
    if (token) this.headers = { authorization: `Bearer ${token}` };
  }

  async events(
    q: EventQuery
  ): Promise<{ events: KernelEvent[]; dropped: number; suppressed: number; invalid: number; truncated: boolean }> {
    const clipped = q.to - q.from > EXPORTER_MAX_RANGE_MS || (q.limit ?? 0) > EXPORTER_MAX_EVENTS;
    const from = Math.max(q.from, q.to - EXPORTER_MAX_RANGE_MS);
    const p = new URLSearchParams({ from: String(Math.floor(from)), to: String(Math.ceil(q.to)) });
    if (q.pod) p.set('pod', q.pod);
    if (q.pid !== undefined) p.set('pid', String(q.pid));
    if (q.type) p.set('type', q.type);
    if (q.traceId) p.set('traceId', q.traceId);
    if (q.limit) p.set('limit', String(Math.min(q.limit, EXPORTER_MAX_EVENTS)));
    const r = await callJson<{ events?: unknown[]; dropped?: number; suppressed?: number; truncated?: boolean }>(
      `${this.baseUrl}/events?${p}`,
      { source: this.name, timeoutMs: this.timeoutMs, retries: 1, headers: this.headers }
    );
    if (r.status === 401 || r.status === 403)
      throw new SourceError(this.name, refused('events', r.status, this.token), r.status);
    if (r.status < 200 || r.status >= 300)
      throw new SourceError(
        this.name,
        `events: HTTP ${r.status} ${String(typeof r.body === 'string' ? r.body : JSON.stringify(r.body)).slice(0, 200)}`,
        r.status
      );
    if (typeof r.body !== 'object' || !Array.isArray(r.body?.events))
      throw new SourceError(this.name, 'events: answer has no `events` array');
    const events: KernelEvent[] = [];
    let invalid = 0;
    for (const raw of r.body.events) {
      if (looksValid(raw)) {
        events.push(raw);
        continue;
      }
      // The slow path decides (and strips what the contract does not know) only for what the fast check refused.
      const ev = KernelEvent.safeParse(raw);
      if (ev.success) events.push(ev.data);
      else invalid++;
    }
    const suppressed = Number(r.body.suppressed);
    return {
      events,
      dropped: r.body.dropped ?? 0,
      suppressed: Number.isFinite(suppressed) && suppressed > 0 ? suppressed : 0,
      invalid,
      truncated: clipped || (r.body.truncated ?? false),
    };
  }

  /** The exporter's /health (open), and whether its event API takes this proxy's token (an empty, one-event query). */
  async health(): Promise<unknown> {
    const o = { source: this.name, timeoutMs: Math.min(this.timeoutMs, 2000), retries: 0, headers: this.headers };
    const now = Date.now();
    const [h, ev] = await Promise.all([
      callJson<unknown>(`${this.baseUrl}/health`, o),
      callJson<unknown>(`${this.baseUrl}/events?from=${now - 1000}&to=${now}&limit=1`, o),
    ]);
    if (h.status < 200 || h.status >= 300) throw new SourceError(this.name, `health: HTTP ${h.status}`, h.status);
    if (ev.status === 401 || ev.status === 403)
      throw new SourceError(this.name, refused('events', ev.status, this.token), ev.status);
    if (ev.status < 200 || ev.status >= 300) throw new SourceError(this.name, `events: HTTP ${ev.status}`, ev.status);
    return h.body;
  }
}

/** Asks every node; merges events (time order), per-node status, never throws. */
export async function eventsFromAll(
  exporters: ExporterSource[],
  q: EventQuery
): Promise<{
  events: KernelEvent[];
  dropped: number;
  suppressed: number;
  invalid: number;
  truncated: boolean;
  sources: SourceStatus[];
}> {
  const results = await Promise.all(exporters.map((e) => settle(e.name, () => e.events(q))));
  const events: KernelEvent[] = [];
  let dropped = 0;
  let suppressed = 0;
  let invalid = 0;
  let truncated = false;
  for (const r of results) {
    if (!r.value) continue;
    events.push(...r.value.events);
    dropped += r.value.dropped;
    suppressed += r.value.suppressed;
    invalid += r.value.invalid;
    truncated ||= r.value.truncated;
  }
  events.sort((a, b) => a.ts - b.ts);
  return { events, dropped, suppressed, invalid, truncated, sources: results.map((r) => r.status) };
}
