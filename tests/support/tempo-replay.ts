/**
 * The Tempo replay fake's formats: Tempo cannot run here, so tests answer in the exact formats of Tempo's recorded
 * answers (../shared/fixtures/tempo): the TraceQL search as docs_search_traceql_compact.json (hex ids with leading
 * zeros stripped, `spanSets`, `metrics`), trace by id as derived_v2_trace_by_id_from_vulture.json
 * (`{trace: {resourceSpans}}`, base64 ids, enum names, 64-bit ints as strings, zero values omitted). `tempoReplay`
 * serves a set of traces that way: a search for `{ }`, `status = error`, a service or a run id inside the asked time
 * range (at most `limit`, as Tempo answers), and each trace by id.
 */
import { readFileSync } from 'node:fs';
import type { Span } from '../../contract';
import { fixture } from './fixtures';
import { tinyServer } from './otlp-spans';

const FX = fixture('tempo');
const searchTemplate = JSON.parse(readFileSync(`${FX}/docs_search_traceql_compact.json`, 'utf8'));
const traceTemplate = JSON.parse(readFileSync(`${FX}/derived_v2_trace_by_id_from_vulture.json`, 'utf8'));

const nanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();
const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
const anyValue = (v: string | number | boolean): Record<string, unknown> =>
  typeof v === 'string'
    ? { stringValue: v }
    : typeof v === 'boolean'
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: String(v) }
        : { doubleValue: v };
const kv = (r: Record<string, string | number | boolean>): unknown[] =>
  Object.entries(r).map(([key, v]) => ({ key, value: anyValue(v) }));

/** One trace as Tempo's v2 trace-by-id answers it (jsonpb: base64 ids, enum names, zero values omitted). */
export function tempoTrace(spans: Span[]): unknown {
  const byRes = new Map<string, Span[]>();
  for (const s of spans) byRes.set(JSON.stringify(s.resource), [...(byRes.get(JSON.stringify(s.resource)) ?? []), s]);
  return {
    ...traceTemplate,
    trace: {
      resourceSpans: [...byRes.values()].map((list) => ({
        resource: { attributes: kv(list[0].resource) },
        scopeSpans: [
          {
            scope: { name: 'hopscope-chain' },
            spans: list.map((s) => ({
              traceId: b64(s.traceId),
              spanId: b64(s.spanId),
              ...(s.parentSpanId ? { parentSpanId: b64(s.parentSpanId) } : {}),
              name: s.name,
              ...(s.kind === 'unspecified' ? {} : { kind: `SPAN_KIND_${s.kind.toUpperCase()}` }),
              startTimeUnixNano: nanos(s.startMs),
              endTimeUnixNano: nanos(s.endMs),
              attributes: kv(s.attributes),
              status:
                s.status === 'error' || s.status === 'timeout'
                  ? { code: 'STATUS_CODE_ERROR' }
                  : s.status === 'ok'
                    ? { code: 'STATUS_CODE_OK' }
                    : {},
            })),
          },
        ],
      })),
    },
  };
}

/** A search hit as Tempo answers it: hex id without leading zeros, root, start, duration, one span set. */
export function searchHit(spans: Span[]): unknown {
  const root = spans.find((s) => !s.parentSpanId) ?? spans[0];
  const start = Math.min(...spans.map((s) => s.startMs));
  const end = Math.max(...spans.map((s) => s.endMs));
  const [tmpl] = searchTemplate.traces;
  return {
    ...tmpl,
    traceID: root.traceId.replace(/^0+/, ''),
    rootServiceName: root.service,
    rootTraceName: root.name,
    startTimeUnixNano: nanos(start),
    durationMs: Math.round(end - start),
    spanSet: undefined,
    spanSets: [
      {
        spans: [
          {
            spanID: root.spanId.replace(/^0+/, ''),
            startTimeUnixNano: nanos(root.startMs),
            durationNanos: nanos(root.endMs - root.startMs),
          },
        ],
        matched: 1,
      },
    ],
  };
}

export interface TempoReplay {
  url: string;
  /** The TraceQL queries asked, in order. */
  queries: string[];
  /** Trace-by-id requests answered. */
  fetched(): number;
  /** Trace-by-id answers wait until this resolves (a test holds the readers in flight). */
  gate?: Promise<void>;
  close(): Promise<void>;
}

/** Serves `traces` as Tempo does (see above); trace-by-id answers wait for `replay.gate` while one is set. */
export async function tempoReplay(traces: Span[][]): Promise<TempoReplay> {
  const byId = new Map<string, string>();
  for (const t of traces) byId.set(t[0].traceId, JSON.stringify(tempoTrace(t)));
  const starts = traces.map((t) => ({ t, start: Math.min(...t.map((s) => s.startMs)) }));
  const queries: string[] = [];
  let fetched = 0;
  const replay: TempoReplay = {
    url: '',
    queries,
    fetched: () => fetched,
    close: async () => undefined,
  };
  const srv = await tinyServer(async (req, res) => {
    const u = new URL(req.url!, 'http://x');
    const json = (body: string): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (u.pathname === '/api/search') {
      const q = u.searchParams.get('q') ?? '';
      queries.push(q);
      const parts = q === '{ }' ? [] : (/^\{ (.*) \}$/.exec(q)?.[1].split(' && ') ?? ['?']);
      const tests: Array<(t: Span[]) => boolean> = [];
      for (const p of parts) {
        let m: RegExpExecArray | null;
        if (p === 'status = error') tests.push((t) => t.some((s) => s.status === 'error' || s.status === 'timeout'));
        else if ((m = /^span\.hopscope\.run_id = "([^"]+)"$/.exec(p)))
          tests.push((t) => t.some((s) => s.attributes['hopscope.run_id'] === m![1]));
        else if ((m = /^resource\.service\.name = "([^"]+)"$/.exec(p)))
          tests.push((t) => t.some((s) => s.service === m![1]));
        else {
          res.writeHead(400, { 'content-type': 'text/plain' });
          return void res.end(`unexpected query ${q}`);
        }
      }
      const from = Number(u.searchParams.get('start')) * 1000;
      const to = Number(u.searchParams.get('end')) * 1000;
      const limit = Number(u.searchParams.get('limit') ?? 20);
      const hits = starts
        .filter((x) => x.start >= from && x.start < to && tests.every((f) => f(x.t)))
        .slice(0, limit)
        .map((x) => searchHit(x.t));
      return json(JSON.stringify({ traces: hits, metrics: searchTemplate.metrics }));
    }
    const tr = /^\/api\/v2\/traces\/([0-9a-f]{32})$/.exec(u.pathname);
    if (tr) {
      if (replay.gate) await replay.gate;
      const body = byId.get(tr[1]);
      if (!body) {
        res.writeHead(404);
        return void res.end();
      }
      fetched++;
      return json(body);
    }
    if (u.pathname === '/ready') return void res.end('ready');
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found\n');
  });
  replay.url = srv.url;
  replay.close = srv.close;
  return replay;
}
