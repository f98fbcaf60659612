/**
 * Zipkin's shared spans: B3 clients and servers that join report both sides of one RPC under one span id (Brave's
 * default; the Collector's zipkin receiver passes both on to OTLP), and a message's consumers all report under its
 * producer's id. That is not an exporter retry: as Jaeger's span-id deduper does, every side that is not the client
 * gets an id of its own (the shared id + 1, the next free one) and becomes the client side's child, and the spans
 * under the shared id that are not on the client's hop move under it. Kind-less copies are told apart by position:
 * the client side is the copy on the service of the span they name as parent, else the one that starts first (on one
 * hop — a service calling itself — the window holding the other). Copies on one hop with the same window are
 * retries, left to the tree pass to drop.
 */
import { podOfSpan, type Span } from '../../../contract';

const sameHop = (a: Span, b: Span): boolean => a.service === b.service && podOfSpan(a) === podOfSpan(b);
const sameSpan = (a: Span, b: Span): boolean => sameHop(a, b) && a.startMs === b.startMs && a.endMs === b.endMs;
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
  const split = new Map<string, { client: Span; sides: Array<{ span: Span; id: string }> }>();
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
    const sides: Array<{ span: Span; id: string }> = [];
    const kept: Span[] = [client];
    for (let k = 0; k < list.length; k++) {
      const c = copies[k];
      if (c === client || kept.some((x) => sameSpan(x, c))) continue;
      kept.push(c);
      const newId = freshId(id, byId);
      byId.set(newId, []);
      out ??= spans.slice();
      out[list[k]] = { ...c, spanId: newId, parentSpanId: id };
      sides.push({ span: c, id: newId });
    }
    if (sides.length) split.set(id, { client, sides });
  }
  if (!out) return undefined;
  for (let i = 0; i < out.length; i++) {
    const s = out[i];
    const m = s.parentSpanId === undefined ? undefined : split.get(s.parentSpanId);
    if (!m || s.spanId === s.parentSpanId || byId.get(s.spanId)?.length === 0 || sameHop(s, m.client)) continue;
    // Under the side on its own hop, else (a side reporting under another service name) the first side.
    const to = m.sides.find((x) => sameHop(x.span, s)) ?? m.sides[0];
    out[i] = { ...s, parentSpanId: to.id };
  }
  return out;
}

/** The client side among a shared id's copies: the one saying so, else the one on its parent's service, else the first to start. */
function clientCopy(copies: Span[], byId: Map<string, number[]>, spans: Span[]): Span {
  const said = copies.find((c) => c.kind === 'client' || c.kind === 'producer');
  if (said) return said;
  const pid = copies[0].parentSpanId;
  const parentServices = pid === undefined ? [] : (byId.get(pid) ?? []).map((i) => spans[i].service);
  const notServer = copies.filter((c) => c.kind !== 'server' && c.kind !== 'consumer');
  const onParent = notServer.filter((c) => parentServices.includes(c.service));
  const pool = onParent.length ? onParent : notServer.length ? notServer : copies;
  return pool.reduce((a, b) => (b.startMs < a.startMs || (b.startMs === a.startMs && b.endMs > a.endMs) ? b : a));
}

/** The shared id + 1 (hex, same width), the next free one; a non-hex id gets a suffix. */
function freshId(id: string, taken: Map<string, number[]>): string {
  if (/^[0-9a-f]{1,16}$/.test(id)) {
    let v = BigInt(`0x${id}`);
    for (;;) {
      v = (v + 1n) & 0xffffffffffffffffn;
      const c = v.toString(16).padStart(id.length, '0');
      if (!taken.has(c)) return c;
    }
  }
  let k = 1;
  while (taken.has(`${id}.${k}`)) k++;
  return `${id}.${k}`;
}
