/**
 * Zipkin's shared spans: B3 clients and servers that join report both sides of one RPC under one span id (Brave's
 * default; the Collector's zipkin receiver passes both on to OTLP), and a message's consumers all report under its
 * producer's id. That is not an exporter retry: as Jaeger's span-id deduper does, every side that is not the client
 * gets an id of its own (the shared id + 1, the next free one) and becomes the client side's child, and the spans
 * under the shared id that are not on the client's hop move under it. Kind-less copies are told apart by position:
 * the client side is the copy on the service of the span they name as parent, else the one that starts first (on one
 * hop — a service calling itself — the window holding the other). Copies on one hop with the same window are
 * retries, left to the tree pass to drop.
 * Near-linear in the spans however many share one id (hops, windows and fresh ids are looked up in maps, not searched
 * for): a trace of 20,000 copies of one id must not hold the proxy's engine for seconds.
 */
import { podOfSpan, type Span } from '../../../contract';

const sameHop = (a: Span, b: Span): boolean => a.service === b.service && podOfSpan(a) === podOfSpan(b);
const sameSpan = (a: Span, b: Span): boolean => sameHop(a, b) && a.startMs === b.startMs && a.endMs === b.endMs;
/** A hop (service and pod) as a map key. */
const hopKey = (s: Span): string => `${s.service}\u0000${podOfSpan(s) ?? '\u0001'}`;
/** A hop and window as a map key: copies with the same key are one span sent twice. */
const spanKey = (s: Span): string => `${hopKey(s)}\u0000${s.startMs}\u0000${s.endMs}`;
const inside = (a: Span, b: Span): boolean => a.startMs >= b.startMs && a.endMs <= b.endMs;

/** The spans with every shared id split; undefined when there is none (retries stay duplicates). */
export function splitSharedSpans(spans: Span[]): Span[] | undefined {
  const byId = new Map<string, number[]>();
  for (let i = 0; i < spans.length; i++) {
    const l = byId.get(spans[i].spanId);
    if (l) l.push(i);
    else byId.set(spans[i].spanId, [i]);
  }
  let out: Span[] | undefined;
  // Per split id: the client copy, and the new id of each other side's first copy per hop.
  const split = new Map<string, { client: Span; first: string; byHop: Map<string, string> }>();
  // Per shared id, the last fresh id handed out: the next side's search goes on from there.
  const cursor = new Map<string, bigint | number>();
  for (const [id, list] of [...byId]) {
    if (list.length < 2) continue;
    const copies = list.map((i) => spans[i]);
    const client = clientCopy(copies, byId, spans);
    // Another hop, a server under a client, or (one hop, no kinds: a service calling itself) a window inside the client's.
    if (
      !copies.some(
        (c) =>
          !sameHop(c, client) ||
          (c.kind === 'server' && client.kind === 'client') ||
          (!sameSpan(c, client) && inside(c, client))
      )
    )
      continue;
    // The first side on each hop (what the spans under the shared id move under), and the first side of all.
    const byHop = new Map<string, string>();
    let first: string | undefined;
    const kept = new Set<string>([spanKey(client)]);
    for (let k = 0; k < list.length; k++) {
      const c = copies[k];
      if (c === client) continue;
      const key = spanKey(c);
      if (kept.has(key)) continue;
      kept.add(key);
      const newId = freshId(id, byId, cursor);
      byId.set(newId, []);
      out ??= spans.slice();
      out[list[k]] = { ...c, spanId: newId, parentSpanId: id };
      first ??= newId;
      const hop = hopKey(c);
      if (!byHop.has(hop)) byHop.set(hop, newId);
    }
    if (first !== undefined) split.set(id, { client, first, byHop });
  }
  if (!out) return undefined;
  for (let i = 0; i < out.length; i++) {
    const s = out[i];
    const m = s.parentSpanId === undefined ? undefined : split.get(s.parentSpanId);
    if (!m || s.spanId === s.parentSpanId || byId.get(s.spanId)?.length === 0 || sameHop(s, m.client)) continue;
    // Under the side on its own hop, else (a side reporting under another service name) the first side.
    out[i] = { ...s, parentSpanId: m.byHop.get(hopKey(s)) ?? m.first };
  }
  return out;
}

/** The client side among a shared id's copies: the one saying so, else the one on its parent's service, else the first to start. */
function clientCopy(copies: Span[], byId: Map<string, number[]>, spans: Span[]): Span {
  const said = copies.find((c) => c.kind === 'client' || c.kind === 'producer');
  if (said) return said;
  const pid = copies[0].parentSpanId;
  const parentServices = new Set(pid === undefined ? [] : (byId.get(pid) ?? []).map((i) => spans[i].service));
  const notServer = copies.filter((c) => c.kind !== 'server' && c.kind !== 'consumer');
  const onParent = notServer.filter((c) => parentServices.has(c.service));
  const pool = onParent.length ? onParent : notServer.length ? notServer : copies;
  return pool.reduce((a, b) => (b.startMs < a.startMs || (b.startMs === a.startMs && b.endMs > a.endMs) ? b : a));
}

/**
 * The shared id + 1 (hex, same width), the next free one; a non-hex id gets a suffix. The search for a shared id's
 * next side starts after its last one (`cursor`): every id before it is taken already, so the answer is the same as
 * searching from the shared id, without walking every earlier side again.
 */
function freshId(id: string, taken: Map<string, number[]>, cursor: Map<string, bigint | number>): string {
  if (/^[0-9a-f]{1,16}$/.test(id)) {
    let v = (cursor.get(id) as bigint | undefined) ?? BigInt(`0x${id}`);
    for (;;) {
      v = (v + 1n) & 0xffffffffffffffffn;
      const c = v.toString(16).padStart(id.length, '0');
      if (!taken.has(c)) {
        cursor.set(id, v);
        return c;
      }
    }
  }
  let k = ((cursor.get(id) as number | undefined) ?? 0) + 1;
  while (taken.has(`${id}.${k}`)) k++;
  cursor.set(id, k);
  return `${id}.${k}`;
}
