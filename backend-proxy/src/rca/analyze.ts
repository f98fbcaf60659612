/**
 * One trace → per-hop anomaly accounting: the anchor (the span that failed or breached its SLO), its critical path,
 * each on-path span's exclusive time and client→server gap against the baseline, error/timeout origins, kernel
 * events joined by pod+window and by trace id, and broken context propagation. Scoring is left to the callers
 * (per trace and per window), which add these accounts up differently.
 */
import type { CriticalPathItem, Evidence, EvidenceKind, Span } from '../../../contract';
import type { Baseline, OperationBaseline } from './baseline';
import type { RcaConfig } from './config';
import { type KernelIndex, destKey, eventsInWindow, linkEventsTo } from './kernel';

export type KernelJoin = 'window' | 'trace' | 'link';
import { kvCacheHitRate, lambdaFor } from './lambda';
import { robustZ } from './stats';
import { type TraceTree, buildTree, criticalPath, podOf } from './tree';

export interface HopAccount {
  service: string;
  pod: string;
  /** λ-weighted significant excess on the critical path (ms). */
  weightedExcessMs: number;
  selfMs: number;
  baselineMs: number;
  hasBaseline: boolean;
  onPathMs: number;
  /** 0…1: this hop is where an error/timeout started. */
  errorScore: number;
  /** 0…KV_DROP_SCORE: a degradation the span reports without being slow or failing (its KV/prefix-cache hit rate collapsed). */
  degradation: number;
  /** Broken propagation seen at this hop (count). */
  propagationBreaks: number;
  /** Kernel event indexes joined here; `strong` ones matched by trace id. */
  /**
   * Joined kernel events and how: inside a span's window on the pod, by the trace id a probe saw, or ('link') sent to
   * the address:port of an entry span (one whose caller has no span in the trace) just before or while it ran.
   */
  kernel: Map<number, KernelJoin>;
  /** Network-side kernel events count only when the hop's gap or self time is anomalous. */
  spanId?: string;
  operation?: string;
  bestExcessMs: number;
  evidence: Evidence[];
}

export type PathItem = CriticalPathItem;

export interface TraceAnalysis {
  traceId?: string;
  tree: TraceTree;
  anchor: number;
  anchorReason: string;
  anchorDurationMs: number;
  criticalPath: PathItem[];
  hops: Map<string, HopAccount>;
  missing: string[];
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
export const fmtMs = (x: number): string => (x >= 100 ? `${Math.round(x)} ms` : x >= 10 ? `${x.toFixed(1)} ms` : `${x.toFixed(2)} ms`);
const isBad = (s: Span): boolean => s.status === 'error' || s.status === 'timeout';

export const hopKey = (service: string, pod: string): string => `${service}\u001f${pod}`;

/**
 * A KV/prefix-cache hit rate fallen to a quarter of its healthy median (itself ≥ 5%) is reported at this weight (times
 * the relative drop): small next to any latency excess or error, so it only decides among hops that show nothing else.
 */
export const KV_DROP_SCORE = 0.05;

export function peerOf(s: Span): string | undefined {
  for (const k of ['peer.service', 'server.address', 'net.peer.name', 'hopscope.peer']) {
    const v = s.attributes[k];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

const lookups = new WeakMap<Baseline, (s: Span) => OperationBaseline | undefined>();
/** Baseline entry of a span through nested maps: no key string built per span (50k-span traces). */
function baselineLookup(b: Baseline | undefined): (s: Span) => OperationBaseline | undefined {
  if (!b) return () => undefined;
  let f = lookups.get(b);
  if (!f) {
    const m = new Map<string, Map<string, Map<string, OperationBaseline>>>();
    for (const op of Object.values(b.ops)) {
      let byKind = m.get(op.service);
      if (!byKind) m.set(op.service, (byKind = new Map()));
      let byName = byKind.get(op.kind);
      if (!byName) byKind.set(op.kind, (byName = new Map()));
      byName.set(op.operation, op);
    }
    f = (s: Span) => m.get(s.service)?.get(s.kind)?.get(s.name);
    lookups.set(b, f);
  }
  return f;
}

const TCP_LINK_EVENTS = new Set(['tcp_retransmit', 'tcp_connect', 'tcp_connect_fail']);
const ipOf = (a: unknown): string | undefined => (typeof a === 'string' && a ? a.replace(/^::ffff:/i, '') : undefined);

/**
 * A TCP event on the caller's pod about a segment sent to a server of this trace (its daddr:dport is that server
 * span's `server.address`:`server.port`) is trouble on the link into that server: it belongs to the callee, as a
 * client span's own time does. Joined by time window alone it would land on the caller (e.g. a retransmitted FIN of
 * a call that already ended, still inside the caller's server span).
 */
function rehomeLinkEvents(k: KernelIndex, spans: Span[], hops: Map<string, HopAccount>, hopOfSpan: (i: number) => HopAccount): void {
  const servers = new Map<string, number>();
  for (let i = 0; i < spans.length; i++) {
    const s = spans[i];
    const addr = ipOf(s.attributes['server.address']);
    const port = Number(s.attributes['server.port']);
    if (s.kind === 'server' && addr && port > 0 && !servers.has(`${addr}:${port}`)) servers.set(`${addr}:${port}`, i);
  }
  if (!servers.size) return;
  for (const h of [...hops.values()]) {
    for (const [e, how] of h.kernel) {
      const ev = k.events[e];
      if (how !== 'window' || !TCP_LINK_EVENTS.has(ev.type)) continue;
      const i = servers.get(`${ipOf(ev.detail.daddr)}:${Number(ev.detail.dport)}`);
      if (i === undefined) continue;
      const to = hopOfSpan(i);
      if (to === h) continue;
      h.kernel.delete(e);
      if (!to.kernel.has(e)) to.kernel.set(e, 'window');
    }
  }
}

export interface AnalyzeContext {
  baseline?: Baseline;
  kernel?: KernelIndex;
  config: RcaConfig;
}

export function analyzeTrace(input: Span[], ctx: AnalyzeContext): TraceAnalysis {
  const { baseline, kernel, config: c } = ctx;
  const missing: string[] = [];
  // A span exported twice (exporter retry) would show up as its own sibling: keep the first copy.
  let spans = input;
  const ids = new Set<string>();
  for (const s of input) ids.add(s.spanId);
  if (ids.size !== input.length) {
    const seen = new Set<string>();
    spans = input.filter((s) => !seen.has(s.spanId) && (seen.add(s.spanId), true));
    missing.push(`nothing: ${input.length - spans.length} duplicate span(s) (same span id) were ignored`);
  }
  const t = buildTree(spans, c.asyncToleranceMs);
  const n = spans.length;
  const hops = new Map<string, HopAccount>();
  const hop = (service: string, pod: string): HopAccount => {
    const k = hopKey(service, pod);
    let h = hops.get(k);
    if (!h) {
      h = { service, pod, weightedExcessMs: 0, selfMs: 0, baselineMs: 0, hasBaseline: true, onPathMs: 0, errorScore: 0, degradation: 0, propagationBreaks: 0, kernel: new Map(), bestExcessMs: -Infinity, evidence: [] };
      hops.set(k, h);
    }
    return h;
  };
  const hopOfSpan = (i: number): HopAccount => (spanHop[i] ??= hop(spans[i].service, podOf(spans[i])));
  const opOf = baselineLookup(baseline);
  // Per span: its own hop (server/internal spans) or its callee's (client spans), looked up once.
  const spanHop: Array<HopAccount | undefined> = new Array(n);
  const peerHop: Array<HopAccount | undefined> = [];
  /** Where a client span's own time belongs: the callee (network side into it), or the unnamed peer it called. */
  const calleeOf = (i: number): HopAccount => {
    const sc = t.serverChild[i];
    if (sc >= 0) return hopOfSpan(sc);
    const peerPod = spans[i].attributes['hopscope.peer.pod'];
    return (peerHop[i] ??= hop(peerOf(spans[i]) ?? `${spans[i].name} (no span)`, typeof peerPod === 'string' && peerPod ? peerPod : 'unknown'));
  };

  // Subtree sizes (reverse BFS) pick the main root: the one holding most of the trace.
  const size = new Int32Array(n).fill(1);
  for (let q = t.order.length - 1; q >= 0; q--) {
    const i = t.order[q];
    if (t.parent[i] >= 0) size[t.parent[i]] += size[i];
  }
  let root = t.roots[0];
  for (const r of t.roots) if (size[r] > size[root] || (size[r] === size[root] && t.start[r] < t.start[root])) root = r;

  // Anchor: the root if it failed or breached its SLO, else the shallowest span that timed out, failed or breached.
  const sloOf = (i: number): number | undefined => {
    const s = spans[i];
    const explicit = c.sloMs[s.service];
    if (explicit !== undefined) return explicit;
    const b = opOf(s);
    return b && b.duration.count >= 5 ? b.duration.p99 * c.sloFactor : undefined;
  };
  const breach = (i: number): boolean => {
    const slo = sloOf(i);
    return slo !== undefined && t.end[i] - t.start[i] > slo;
  };
  const rootZ = (): number => {
    const b = c.sloMs[spans[root].service] === undefined ? opOf(spans[root]) : undefined;
    if (!b || b.duration.count < 5) return -Infinity;
    const dur = t.end[root] - t.start[root];
    return dur - b.duration.median >= c.minExcessMs ? robustZ(dur, b.duration, c.madFloorRatio) : -Infinity;
  };
  let anchor = root;
  let anchorReason = 'trace root';
  const rootSpan = spans[root];
  if (rootSpan.status === 'timeout') anchorReason = 'the root span timed out';
  else if (rootSpan.status === 'error') anchorReason = 'the root span failed';
  else if (breach(root)) anchorReason = `the root span breached its SLO (${fmtMs(sloOf(root)!)})`;
  else if (rootZ() >= c.zThreshold) {
    // No explicit SLO and p99 × sloFactor of a small healthy sample is loose (one cold start sets it): a root far
    // outside its usual spread is the slow request, by the same robust test every hop gets.
    const d = opOf(rootSpan)!.duration;
    anchorReason = `the root span took ${fmtMs(t.end[root] - t.start[root])} vs ${fmtMs(d.median)} usually (z=${rootZ().toFixed(1)})`;
  } else {
    // Every span of the worst class (timeouts, else failures, else breaches), and the span that frames them all: a
    // breach in one branch must not hide another branch's (two slow hops under a healthy-looking root).
    const inRoot = new Uint8Array(n);
    inRoot[root] = 1;
    const rankOf = new Uint8Array(n).fill(9);
    let foundRank = 9;
    for (const i of t.order) {
      if (i !== root && t.parent[i] >= 0 && inRoot[t.parent[i]]) inRoot[i] = 1;
      if (i === root || !inRoot[i]) continue;
      const rank = spans[i].status === 'timeout' ? 0 : spans[i].status === 'error' ? 1 : breach(i) ? 2 : 9;
      rankOf[i] = rank;
      if (rank < foundRank) foundRank = rank;
    }
    if (foundRank < 9) {
      // Lowest common ancestor in O(n): count marked spans per subtree, then descend while one child holds them all.
      const below = new Int32Array(n);
      let total = 0;
      for (let q = t.order.length - 1; q >= 0; q--) {
        const i = t.order[q];
        if (!inRoot[i]) continue;
        if (rankOf[i] === foundRank) { below[i]++; total++; }
        if (i !== root && t.parent[i] >= 0) below[t.parent[i]] += below[i];
      }
      let a = root;
      for (;;) {
        if (rankOf[a] === foundRank) break;
        const next = t.children[a].find((ch) => below[ch] === total);
        if (next === undefined) break;
        a = next;
      }
      anchor = a;
      const what = ['timed out', 'failed', 'breached their SLO'][foundRank];
      anchorReason = total === 1 || rankOf[a] === foundRank
        ? ['a span timed out', 'a span failed', 'a span breached its SLO'][foundRank]
        : `${total} spans ${what}; the anchor is the span that frames them all`;
    }
  }
  const anchorDurationMs = Math.max(t.cEnd[anchor] - t.cStart[anchor], 1e-6);

  // Critical path under the anchor, per span time on it.
  const segs = criticalPath(t, anchor);
  const onPathArr = new Float64Array(n);
  const seenOnPath = new Uint8Array(n);
  const firstSeen: number[] = [];
  const chain: number[] = [];
  for (const sg of segs) {
    if (!seenOnPath[sg.index]) {
      // Ancestors the path went through without own time (a server span its children cover) still frame it.
      chain.length = 0;
      for (let a = sg.index; a >= 0 && !seenOnPath[a]; a = a === anchor ? -1 : t.parent[a]) {
        seenOnPath[a] = 1;
        chain.push(a);
      }
      for (let k = chain.length - 1; k >= 0; k--) firstSeen.push(chain[k]);
    }
    onPathArr[sg.index] += sg.endMs - sg.startMs;
  }
  const onPath = { get: (i: number): number => onPathArr[i] };
  // Spans in order of first appearance on the path.
  const pathItems: PathItem[] = [];
  const noBaselineOps = new Set<string>();
  const depth = new Int32Array(n);
  const kbuf: number[] = [];
  /** Kernel events of `pod` (or `pid`) inside [from, to] (± slack) join hop `h`. */
  const joinKernel = (h: HopAccount, pod: string, pid: number | undefined, from: number, to: number): void => {
    if (!kernel || !kernel.events.length) return;
    kbuf.length = 0;
    eventsInWindow(kernel, pod, pid, from, to, c.kernelSlackMs, kbuf);
    for (const e of kbuf) if (!h.kernel.has(e)) h.kernel.set(e, 'window');
  };
  const pidOf = (s: Span): number | undefined => {
    const p = s.resource['process.pid'];
    return typeof p === 'number' ? p : undefined;
  };

  const spanExcess = (i: number): { excess: number; z: number } => {
    const s = spans[i];
    const b = opOf(s);
    const on = onPath.get(i) ?? 0;
    if (!b) return { excess: on * 0.5, z: NaN };
    const z = robustZ(t.self[i], b.self, c.madFloorRatio);
    return { excess: z >= c.zThreshold && t.self[i] - b.self.median >= c.minExcessMs ? Math.min(t.self[i] - b.self.median, on) : 0, z };
  };
  // A caller whose calls to several different services all show a grown client→server gap is itself slow on the
  // client side (CPU starvation, connection pool, its own egress): blame it, not each callee.
  const gapByCaller = new Map<string, Map<string, number>>();
  for (const i of firstSeen) {
    if (spans[i].kind !== 'client' || t.serverChild[i] < 0 || !opOf(spans[i])) continue;
    const { excess } = spanExcess(i);
    if (excess <= 0) continue;
    const ck = hopKey(spans[i].service, podOf(spans[i]));
    let m = gapByCaller.get(ck);
    if (!m) gapByCaller.set(ck, (m = new Map()));
    const callee = spans[t.serverChild[i]].service;
    m.set(callee, Math.max(m.get(callee) ?? 0, excess));
  }
  const blamedCallers = new Set<string>();
  for (const [ck, m] of gapByCaller) {
    let max = 0;
    for (const v of m.values()) max = Math.max(max, v);
    let grown = 0;
    for (const v of m.values()) if (v >= 0.25 * max) grown++;
    if (grown >= 2) blamedCallers.add(ck);
  }

  interface Note { h: HopAccount; kind: EvidenceKind; i: number; excess: number; z: number; lambda: number; reasons: string[]; count: number; total: number }
  const notes = new Map<string, Note>();
  for (const i of firstSeen) {
    const s = spans[i];
    const self = t.self[i];
    const on = onPath.get(i) ?? 0;
    const b = opOf(s);
    depth[i] = i === anchor ? 0 : depth[t.parent[i]] + 1;
    const item: PathItem = {
      spanId: s.spanId, ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}), depth: depth[i], service: s.service, pod: podOf(s), operation: s.name, kind: s.kind, status: s.status,
      startMs: s.startMs, endMs: s.endMs, durationMs: round(s.endMs - s.startMs), selfMs: round(self), onPathMs: round(on),
    };
    if (!Number.isNaN(t.gap[i])) item.gapMs = round(t.gap[i]);
    if (b) item.baselineSelfMs = round(b.self.median);
    if (t.skewMs[i] !== 0) item.skewCorrectedMs = round(t.skewMs[i]);
    pathItems.push(item);

    const callerSide = s.kind === 'client' && t.serverChild[i] >= 0 && blamedCallers.size > 0 && blamedCallers.has(hopKey(s.service, podOf(s)));
    const isClient = s.kind === 'client' && !callerSide;
    const h = isClient ? calleeOf(i) : hopOfSpan(i);
    h.onPathMs += on;
    h.selfMs += self;
    // Without a baseline all of the span's own time on the path is suspect, at half weight, and we say so.
    const { excess, z } = spanExcess(i);
    if (b) h.baselineMs += b.self.median;
    else {
      h.hasBaseline = false;
      noBaselineOps.add(`${s.service} ${s.kind} "${s.name}"`);
    }
    const { lambda, reasons } = lambdaFor(s.kind === 'client' && t.serverChild[i] >= 0 ? spans[t.serverChild[i]] : s, c);
    if (excess > 0) {
      h.weightedExcessMs += excess * lambda;
      if (excess > h.bestExcessMs) {
        h.bestExcessMs = excess;
        h.spanId = isClient && t.serverChild[i] >= 0 ? spans[t.serverChild[i]].spanId : s.spanId;
        h.operation = isClient && t.serverChild[i] >= 0 ? spans[t.serverChild[i]].name : s.name;
      }
      // Only the worst span per hop and kind is spelled out (with a count of the others): a 50k-span trace with a
      // slow hop called 10k times must not build 10k sentences.
      const kind: EvidenceKind = isClient ? (t.serverChild[i] >= 0 ? 'client_server_gap' : 'unanswered_call') : callerSide ? 'client_side_delay' : 'self_time';
      const nk = `${hopKey(h.service, h.pod)}\u001f${kind}`;
      const prev = notes.get(nk);
      if (!prev) notes.set(nk, { h, kind, i, excess, z, lambda, reasons, count: 1, total: excess });
      else {
        prev.count++;
        prev.total += excess;
        if (excess > prev.excess) Object.assign(prev, { i, excess, z, lambda, reasons });
      }
    }
    // The cache a hop reports losing (thrash, eviction) degrades it before the latency shows, e.g. when it is idle.
    const kv = s.kind !== 'client' && b?.kvHit && b.kvHit.count >= 5 && b.kvHit.median >= 0.05 ? kvCacheHitRate(s) : undefined;
    if (kv !== undefined && b?.kvHit && kv <= 0.25 * b.kvHit.median) {
      const drop = KV_DROP_SCORE * (1 - Math.max(0, kv) / b.kvHit.median);
      if (drop > h.degradation) {
        h.degradation = drop;
        h.spanId ??= s.spanId;
        h.operation ??= s.name;
        h.evidence.push({
          kind: 'kv_cache_drop',
          summary: `${s.service} "${s.name}": KV-cache hit rate ${(kv * 100).toFixed(0)}% vs ${(b.kvHit.median * 100).toFixed(0)}% usually (median of ${b.kvHit.count} healthy): the cache is being evicted or thrashing`,
          spanId: s.spanId, hitRate: round(kv), baselineHitRate: round(b.kvHit.median),
        });
      }
    }
    // Kernel joins use the span's own clock (the node's), not the skew-corrected window. An entry span (a server
    // span whose caller left no client span) also looks back: the connect and TLS handshake precede the request.
    const entry = s.kind === 'server' && (t.parent[i] < 0 || spans[t.parent[i]].kind !== 'client');
    joinKernel(h, podOf(s), pidOf(s), s.startMs - (entry ? c.kernelLookbackMs : 0), s.endMs);
    // Its caller is outside the trace (a client, an ingress): segments it had to resend to this server delayed the
    // request before the span began, a wait only the client sees. They are found by where they were sent.
    const dest = entry && kernel ? destKey(s.attributes['server.address'], s.attributes['server.port']) : undefined;
    if (dest) {
      kbuf.length = 0;
      linkEventsTo(kernel!, dest, s.startMs - c.kernelLookbackMs, s.endMs + c.kernelSlackMs, kbuf);
      for (const e of kbuf) if (h.kernel.get(e) !== 'trace') h.kernel.set(e, 'link');
    }
    if (kernel && isClient && t.serverChild[i] >= 0) {
      const sc = spans[t.serverChild[i]];
      joinKernel(h, podOf(sc), pidOf(sc), s.startMs - t.skewMs[t.serverChild[i]] + t.skewMs[i], s.endMs - t.skewMs[t.serverChild[i]] + t.skewMs[i]);
    }
  }
  for (const nt of notes.values()) {
    const { h, kind, i, excess, z, lambda, reasons } = nt;
    const s = spans[i];
    const self = t.self[i];
    const b = opOf(s);
    const base = b
      ? ` vs ${fmtMs(b.self.median)} usually (median of ${b.self.count} healthy; z=${z.toFixed(1)})`
      : ' (no baseline for this operation: counted at half weight)';
    const why = reasons.length ? `; ${reasons.join('; ')}` : '';
    const more = nt.count > 1 ? `; the worst of ${nt.count} such spans, ${fmtMs(nt.total)} above baseline in all` : '';
    let summary: string;
    if (kind === 'client_server_gap' || kind === 'unanswered_call') {
      const callee = kind === 'client_server_gap' ? `${h.service}'s server span` : `a span from ${h.service} (none arrived)`;
      summary = `${s.service} → ${h.service}: ${fmtMs(self)} between the client span "${s.name}" and ${callee}${base}; network, TLS or queueing${why}${more}`;
    } else if (kind === 'client_side_delay') {
      summary = `${s.service} → ${spans[t.serverChild[i]].service}: ${fmtMs(self)} between the client span "${s.name}" and the server span${base}; ${s.service}'s calls to ${gapByCaller.get(hopKey(s.service, podOf(s)))!.size} services are all slow to leave it (CPU, client pool or its egress)${why}${more}`;
    } else {
      summary = `${s.service} "${s.name}" spent ${fmtMs(self)} in itself${base}; ${fmtMs(excess)} of it above baseline on the critical path${why}${more}`;
    }
    h.evidence.push({
      kind, summary, spanId: s.spanId, valueMs: round(self), ...(b ? { baselineMs: round(b.self.median) } : {}), excessMs: round(excess), lambda,
      ...(nt.count > 1 ? { spans: nt.count, totalExcessMs: round(nt.total) } : {}),
    });
  }
  if (noBaselineOps.size) {
    const list = [...noBaselineOps].sort();
    missing.push(`baseline for ${list.length} operation(s): ${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}`);
  }

  // Error and timeout origins under the anchor: a failed span none of whose synchronous children failed.
  const inAnchor = new Uint8Array(n);
  inAnchor[anchor] = 1;
  for (const i of t.order) if (i !== anchor && t.parent[i] >= 0 && inAnchor[t.parent[i]]) inAnchor[i] = 1;
  for (let i = 0; i < n; i++) {
    if (!inAnchor[i] || !isBad(spans[i])) continue;
    if (t.children[i].some((ch) => isBad(spans[ch]))) continue;
    const s = spans[i];
    const isClient = s.kind === 'client';
    const h = isClient ? calleeOf(i) : hopOfSpan(i);
    const b = opOf(s);
    const usual = b ? b.errorRate : 0;
    const weight = s.status === 'timeout' ? 1 : Math.max(0, 1 - usual);
    h.errorScore = Math.max(h.errorScore, weight);
    if (h.bestExcessMs === -Infinity || !h.spanId) {
      h.spanId = isClient && t.serverChild[i] >= 0 ? spans[t.serverChild[i]].spanId : s.spanId;
      h.operation = isClient && t.serverChild[i] >= 0 ? spans[t.serverChild[i]].name : s.name;
    }
    const msg = s.statusMessage ? `: ${s.statusMessage}` : '';
    const dur = fmtMs(s.endMs - s.startMs);
    let summary: string;
    if (isClient && s.status === 'timeout') {
      const sc = t.serverChild[i];
      summary = sc >= 0
        ? `${s.service}'s call "${s.name}" to ${h.service} timed out after ${dur}${msg}; ${h.service}'s span ran ${fmtMs(spans[sc].endMs - spans[sc].startMs)}`
        : `${s.service}'s call "${s.name}" to ${h.service} timed out after ${dur}${msg}; no span from ${h.service} arrived`;
    } else if (isClient) {
      summary = `${s.service}'s call "${s.name}" to ${h.service} failed after ${dur}${msg} (${t.serverChild[i] >= 0 ? 'the server span did not fail: network side' : 'no server span'})`;
    } else {
      summary = `${s.service} "${s.name}" ${s.status === 'timeout' ? 'timed out' : 'failed'} after ${dur}${msg}; the first failure on its branch (its children did not fail)`;
    }
    if (usual > 0) summary += `; ${(usual * 100).toFixed(1)}% of healthy calls fail too`;
    h.evidence.push({ kind: s.status === 'timeout' ? 'timeout' : 'error', summary, spanId: s.spanId });
    joinKernel(h, podOf(s), pidOf(s), s.startMs, s.endMs);
  }

  // Degradation the span itself reports without failing: a GPU out-of-memory answered by a fallback model.
  for (let i = 0; i < n; i++) {
    if (!inAnchor[i]) continue;
    const s = spans[i];
    const oom = s.attributes['hopscope.gpu.oom'] === true || s.attributes['hopscope.fallback.reason'] === 'gpu_oom';
    if (!oom) continue;
    const h = hopOfSpan(i);
    h.errorScore = Math.max(h.errorScore, 0.8);
    h.spanId ??= s.spanId;
    h.operation ??= s.name;
    const fb = s.attributes['hopscope.fallback.model'];
    h.evidence.push({
      kind: 'gpu_oom',
      summary: `${s.service} "${s.name}" hit a GPU out-of-memory${typeof fb === 'string' ? ` and fell back to ${fb}` : ''} (span attribute hopscope.gpu.oom)`,
      spanId: s.spanId,
    });
    joinKernel(h, podOf(s), pidOf(s), s.startMs, s.endMs);
  }

  // Kernel events: by pod (or pid) inside each on-path span's window, and by trace id wherever they happened.
  if (kernel && kernel.events.length) {
    const traceId = spans[anchor].traceId;
    const byTrace = kernel.byTrace.get(traceId);
    if (byTrace) {
      const podService = new Map<string, string>();
      for (const s of spans) if (!podService.has(podOf(s))) podService.set(podOf(s), s.service);
      let unplaced = 0;
      for (const e of byTrace) {
        const ev = kernel.events[e];
        const svc = ev.pod ? podService.get(ev.pod) : undefined;
        if (svc === undefined) { unplaced++; continue; }
        hop(svc, ev.pod!).kernel.set(e, 'trace');
      }
      if (unplaced) missing.push(`pod of ${unplaced} kernel event(s) carrying this trace id (no span of this trace ran on it)`);
    }
    rehomeLinkEvents(kernel, spans, hops, hopOfSpan);
  }

  // Broken context propagation.
  const propagation = (h: HopAccount, summary: string, extra: Record<string, unknown>): void => {
    h.propagationBreaks++;
    h.evidence.push({ kind: 'broken_propagation', summary, ...extra });
  };
  for (const o of t.orphans) {
    const s = spans[o];
    const text = `span ${s.parentSpanId} (parent of ${s.service} "${s.name}"): dropped, or context propagation broke before ${s.service}`;
    missing.push(text);
    propagation(hopOfSpan(o), `${s.service} "${s.name}" names parent ${s.parentSpanId}, which is not in the trace: context propagation broke or a span was dropped`, { spanId: s.spanId });
  }
  const parentless = t.roots.filter((r) => spans[r].parentSpanId === undefined);
  if (parentless.length > 1) {
    missing.push(`a single root: ${parentless.length} spans start the trace (${parentless.slice(0, 3).map((r) => `${spans[r].service} "${spans[r].name}"`).join(', ')}): a hop restarted the trace context`);
  }
  if (spans[root].parentSpanId !== undefined) missing.push(`the trace's root span (the earliest span names parent ${spans[root].parentSpanId})`);
  for (let i = 0; i < n; i++) {
    const s = spans[i];
    if (s.kind !== 'client' || t.serverChild[i] >= 0 || t.async[i]) continue;
    const b = opOf(s);
    // Calls to uninstrumented dependencies (databases…) never had a server span: only flag what healthy traffic had.
    if (b && !b.gap) continue;
    if (!b && peerOf(s) === undefined && !isBad(s)) continue;
    const peer = peerOf(s) ?? 'its server';
    if (s.status === 'timeout') {
      // A hung callee may simply not have reported yet: say so, without calling it broken propagation.
      missing.push(`server span for ${s.service}'s call "${s.name}" to ${peer} (the call timed out; a hung callee may never report its span)`);
      continue;
    }
    missing.push(`server span for ${s.service}'s call "${s.name}" to ${peer}`);
    propagation(calleeOf(i), `${s.service} called ${peer} ("${s.name}", ${fmtMs(s.endMs - s.startMs)}) but no server span joined the trace: uninstrumented hop or lost traceparent`, { spanId: s.spanId });
  }
  if (c.expectedEdges.length) {
    const edges = new Set(c.expectedEdges.map(([a, b]) => `${a}\u001f${b}`));
    const via = new Map<string, string[]>();
    // Edges grouped by caller once: a → x → b in O(edges × fan-out), appending in place (no array copy per edge).
    const from = new Map<string, string[]>();
    for (const [a, b] of c.expectedEdges) {
      const l = from.get(a);
      if (l) l.push(b);
      else from.set(a, [b]);
    }
    for (const [a, x] of c.expectedEdges) for (const b of from.get(x) ?? []) if (!edges.has(`${a}\u001f${b}`)) {
      const k = `${a}\u001f${b}`;
      const l = via.get(k);
      if (l) l.push(x);
      else via.set(k, [x]);
    }
    const reported = new Set<string>();
    for (let i = 0; i < n; i++) {
      // Only where the service changes (parent on another service): no walk up same-service chains per span.
      const p = t.parent[i];
      if (p < 0 || spans[p].service === spans[i].service) continue;
      const k = `${spans[p].service}\u001f${spans[i].service}`;
      const between = via.get(k);
      if (!between || reported.has(k)) continue;
      reported.add(k);
      missing.push(`a span from ${between.join(' or ')} between ${spans[p].service} and ${spans[i].service}`);
      for (const x of between) propagation(hop(x, 'unknown'), `${spans[p].service} reached ${spans[i].service} directly, but the topology routes it through ${x}: ${x} is uninstrumented or dropped the context`, { spanId: spans[i].spanId });
    }
  }

  return { traceId: spans[anchor].traceId, tree: t, anchor, anchorReason, anchorDurationMs, criticalPath: pathItems, hops, missing };
}
