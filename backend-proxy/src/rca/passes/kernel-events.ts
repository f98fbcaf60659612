/**
 * Kernel events (`../kernel.ts`): by pod (else pid) inside each on-path span's window (± `kernelSlackMs`, the
 * span's own clock) — an entry span (its caller left no client span) also `kernelLookbackMs` before it, where its
 * connect and handshake were, plus the TCP events sent to its address:port — for a client span also the callee pod's
 * events in the call window; the error and degradation origins' windows; and by trace id anywhere. A TCP event whose
 * daddr:dport is a server span's `server.address`:`server.port` is on the link into that server and moves to its hop.
 */
import { pidOfSpan, podOrServiceOfSpan, serverEndpointOfSpan, endpointKey, type Span } from '../../../../contract';
import { type HopAccount, type TraceAccount, hopAt, hopOfSpan } from '../account';
import { LINK_EVENT_TYPES, eventsInWindow, linkEventsTo } from '../kernel';

export function kernelEvents(a: TraceAccount): void {
  const k = a.kernel;
  if (!k || !k.events.length) return;
  const { spans, tree: t, config: c } = a;
  const buf: number[] = [];
  /** Events of the span's pod (or pid) inside [from, to] (± slack) join hop `h`. */
  const join = (h: HopAccount, s: Span, from: number, to: number): void => {
    buf.length = 0;
    eventsInWindow(k, podOrServiceOfSpan(s), pidOfSpan(s), from, to, c.kernelSlackMs, buf);
    for (const e of buf) if (!h.kernel.has(e)) h.kernel.set(e, 'window');
  };

  for (const i of a.path) {
    const s = spans[i];
    const h = a.bookedOn[i]!;
    const p = t.parent[i];
    const entry = s.kind === 'server' && (p < 0 || spans[p].kind !== 'client');
    join(h, s, s.startMs - (entry ? c.kernelLookbackMs : 0), s.endMs);
    // Its caller is outside the trace (a client, an ingress): segments it had to resend to this server delayed the
    // request before the span began, a wait only the client sees. They are found by where they were sent.
    const dest = entry ? serverEndpointOfSpan(s) : undefined;
    if (dest) {
      buf.length = 0;
      linkEventsTo(k, dest, s.startMs - c.kernelLookbackMs, s.endMs + c.kernelSlackMs, buf);
      for (const e of buf) if (h.kernel.get(e) !== 'trace') h.kernel.set(e, 'link');
    }
    const sc = t.serverChild[i];
    if (s.kind === 'client' && !a.callerSide[i] && sc >= 0) {
      // The callee's pod in the call's window, on the callee's clock.
      const shift = t.skewMs[i] - t.skewMs[sc];
      join(h, spans[sc], s.startMs + shift, s.endMs + shift);
    }
  }
  for (const o of a.origins) join(o.h, spans[o.index], spans[o.index].startMs, spans[o.index].endMs);

  const byTrace = k.byTrace.get(spans[a.anchor].traceId);
  if (byTrace) {
    const podService = new Map<string, string>();
    for (const s of spans) {
      const pod = podOrServiceOfSpan(s);
      if (!podService.has(pod)) podService.set(pod, s.service);
    }
    let unplaced = 0;
    for (const e of byTrace) {
      const ev = k.events[e];
      const svc = ev.pod ? podService.get(ev.pod) : undefined;
      if (svc === undefined) {
        unplaced++;
        continue;
      }
      hopAt(a, svc, ev.pod!).kernel.set(e, 'trace');
    }
    if (unplaced)
      a.missing.push(`pod of ${unplaced} kernel event(s) carrying this trace id (no span of this trace ran on it)`);
  }
  rehomeLinkEvents(a);
}

/**
 * A TCP event on the caller's pod about a segment sent to a server of this trace (its daddr:dport is that server
 * span's `server.address`:`server.port`) is trouble on the link into that server: it belongs to the callee, as a
 * client span's own time does. Joined by time window alone it would land on the caller (e.g. a retransmitted FIN of
 * a call that already ended, still inside the caller's server span).
 */
function rehomeLinkEvents(a: TraceAccount): void {
  const { spans, kernel: k } = a;
  const servers = new Map<string, number>();
  for (let i = 0; i < spans.length; i++) {
    if (spans[i].kind !== 'server') continue;
    const ep = serverEndpointOfSpan(spans[i]);
    if (ep && !servers.has(ep)) servers.set(ep, i);
  }
  if (!servers.size) return;
  for (const h of [...a.hops.values()]) {
    for (const [e, how] of h.kernel) {
      const ev = k!.events[e];
      if (how !== 'window' || !LINK_EVENT_TYPES.has(ev.type)) continue;
      const ep = endpointKey(ev.detail.daddr, ev.detail.dport);
      const i = ep === undefined ? undefined : servers.get(ep);
      if (i === undefined) continue;
      const to = hopOfSpan(a, i);
      if (to === h) continue;
      h.kernel.delete(e);
      if (!to.kernel.has(e)) to.kernel.set(e, 'window');
    }
  }
}
