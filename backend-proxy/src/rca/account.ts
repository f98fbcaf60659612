/**
 * The one account a trace's analysis passes share (`passes/`, run in order by `analyze.ts`): the trace's tree, its
 * anchor and critical path, and per hop (service × pod) what each pass found there. Passes only add to it; scoring
 * (per trace and per window) reads the hops afterwards.
 */
import {
  type CriticalPathItem,
  type EngineState,
  type Evidence,
  type LlmPhases,
  peerOfClientSpan,
  peerPodOfClientSpan,
  podOrServiceOfSpan,
  type Span,
} from '../../../contract';
import type { Baseline, OperationBaseline } from './baseline';
import type { RcaConfig } from './config';
import { JoinedEvents, type KernelIndex } from './kernel';
import type { TraceTree } from './tree';

export interface HopAccount {
  service: string;
  pod: string;
  /** λ-weighted significant excess on the critical path (ms). */
  weightedExcessMs: number;
  selfMs: number;
  baselineMs: number;
  hasBaseline: boolean;
  onPathMs: number;
  /** 0…1: this hop is where an error, a timeout or a degradation (a model fallback) started. */
  errorScore: number;
  /** A degradation the span reports without being slow or failing: its KV/prefix-cache hit rate collapsed (≤ 0.05), its
   *  pod leaks GPU memory (0.25, passes/gpu-memory-leak.ts). */
  degradation: number;
  /** Broken propagation seen at this hop (count). */
  propagationBreaks: number;
  /** Joined kernel events (index into the kernel index's events) and how they joined. */
  kernel: JoinedEvents;
  spanId?: string;
  operation?: string;
  bestExcessMs: number;
  evidence: Evidence[];
}

/** A span that did not fail but served a degraded answer (e.g. a fallback model): anchored and booked like a failure. */
export interface Degradation {
  index: number;
  /** errorScore it gives its hop (≤ 1). */
  score: number;
  /** What the span did, after "a span …" (the anchor's reason). */
  what: string;
  evidence: Evidence[];
}

/**
 * The inference engine's state on a pod at an instant (from its metrics, gathered by the caller: the engine does no
 * I/O); undefined when nothing is known of that pod.
 */
export type EngineStateLookup = (service: string, pod: string, atMs: number) => EngineState | undefined;

/**
 * The same as data, for the engine's worker threads (a function cannot cross to a worker): [pod, instant, state] for
 * the instants the caller read. Looked up by pod at the nearest instant within `ENGINE_STATE_TABLE_SLACK_MS`.
 */
export type EngineStateTable = Array<[pod: string, atMs: number, state: EngineState]>;
const ENGINE_STATE_TABLE_SLACK_MS = 1000;

/** The lookup over a table of read states (see EngineStateTable). */
export function engineStateOfTable(table: EngineStateTable): EngineStateLookup {
  const byPod = new Map<string, Array<[number, EngineState]>>();
  for (const [pod, atMs, state] of table) {
    let l = byPod.get(pod);
    if (!l) byPod.set(pod, (l = []));
    l.push([atMs, state]);
  }
  return (_service, pod, atMs) => {
    let best: [number, EngineState] | undefined;
    for (const e of byPod.get(pod) ?? [])
      if (
        Math.abs(e[0] - atMs) <= ENGINE_STATE_TABLE_SLACK_MS &&
        (!best || Math.abs(e[0] - atMs) < Math.abs(best[0] - atMs))
      )
        best = e;
    return best?.[1];
  };
}

export interface TraceAccount {
  readonly config: RcaConfig;
  readonly engineState?: EngineStateLookup;
  readonly baseline?: Baseline;
  readonly kernel?: KernelIndex;
  /** The healthy statistics of a span's operation (service, kind, name). */
  readonly opOf: (s: Span) => OperationBaseline | undefined;
  /** The trace's spans, duplicates removed (passes index everything by position in this list). */
  spans: Span[];
  tree: TraceTree;
  /** The main root: the one holding most of the trace. */
  root: number;
  anchor: number;
  anchorReason: string;
  anchorDurationMs: number;
  /** 1 for the anchor and every span under it. */
  inAnchor: Uint8Array;
  /** Degraded spans found before the anchor is chosen (`degraded[i]` = 1 for them). */
  degradations: Degradation[];
  degraded: Uint8Array;
  /** Spans on the critical path in order of first appearance, each span's time on it, its depth below the anchor. */
  path: number[];
  onPathMs: Float64Array;
  criticalPath: CriticalPathItem[];
  /** Per on-path span: its significant excess over the baseline on the path (ms), the robust z, the hop it is booked on. */
  excessMs: Float64Array;
  z: Float64Array;
  bookedOn: Array<HopAccount | undefined>;
  /** On-path client spans whose own time is the caller's (it is slow to call several services), not the callee's. */
  callerSide: Uint8Array;
  /** Callers (hop key) slow on the client side, and to how many services their calls are slow. */
  slowCallers: Map<string, number>;
  /** Error and degradation origins, joined with the kernel events of their window by the kernel pass. */
  origins: Array<{ h: HopAccount; index: number }>;
  hops: Map<string, HopAccount>;
  hopsByService: Map<string, Map<string, HopAccount>>;
  missing: string[];
  /** `opOf` per span, once: null = looked up, none. */
  ops: Array<OperationBaseline | null | undefined>;
  /** 1 = the span's kind was inferred from the tree (it said none): calls through it are inferred (`passes/span-roles.ts`). */
  inferredKind: Uint8Array;
  /** Hops whose evidence already says a call into them was inferred (once per hop). */
  inferredNoted: Set<HopAccount>;
  /** Inference server spans on the critical path, split into the engine's phases (the `llm phases` pass). */
  llm: LlmPhases[];
  /** Hop of each span and of each client span's unnamed peer, looked up once. */
  spanHop: Array<HopAccount | undefined>;
  peerHop: Array<HopAccount | undefined>;
}

export const hopKey = (service: string, pod: string): string => `${service}\u001f${pod}`;

export function newHop(service: string, pod: string): HopAccount {
  return {
    service,
    pod,
    weightedExcessMs: 0,
    selfMs: 0,
    baselineMs: 0,
    hasBaseline: true,
    onPathMs: 0,
    errorScore: 0,
    degradation: 0,
    propagationBreaks: 0,
    kernel: new JoinedEvents(),
    bestExcessMs: -Infinity,
    evidence: [],
  };
}

export function hopAt(a: TraceAccount, service: string, pod: string): HopAccount {
  // Two levels, no key string built per lookup: the span's own strings are hashed once and for all.
  let byPod = a.hopsByService.get(service);
  if (!byPod) a.hopsByService.set(service, (byPod = new Map()));
  let h = byPod.get(pod);
  if (!h) {
    byPod.set(pod, (h = newHop(service, pod)));
    a.hops.set(hopKey(service, pod), h);
  }
  return h;
}

/** The healthy statistics of span `i`'s operation, looked up once per span. */
export function opAt(a: TraceAccount, i: number): OperationBaseline | undefined {
  const op = a.ops[i];
  if (op !== undefined) return op ?? undefined;
  const found = a.opOf(a.spans[i]);
  a.ops[i] = found ?? null;
  return found;
}

/** The hop a span runs on (its service on its pod). */
export const hopOfSpan = (a: TraceAccount, i: number): HopAccount =>
  (a.spanHop[i] ??= hopAt(a, a.spans[i].service, podOrServiceOfSpan(a.spans[i])));

/** Where a client span's own time belongs: the callee (the network side into it), or the unnamed peer it called. */
export function calleeOf(a: TraceAccount, i: number): HopAccount {
  const sc = a.tree.serverChild[i];
  if (sc >= 0) return hopOfSpan(a, sc);
  const s = a.spans[i];
  return (a.peerHop[i] ??= hopAt(a, peerOfClientSpan(s) ?? `${s.name} (no span)`, peerPodOfClientSpan(s) ?? 'unknown'));
}

/** The hop a finding on span `i` is booked on: the callee for a client span, else the span's own. */
export const bookingHop = (a: TraceAccount, i: number): HopAccount =>
  a.spans[i].kind === 'client' ? calleeOf(a, i) : hopOfSpan(a, i);

/** The span that stands for hop work found on span `i`: a client span's server child when it has one. */
export const bookingSpan = (a: TraceAccount, i: number): Span => {
  const sc = a.spans[i].kind === 'client' ? a.tree.serverChild[i] : -1;
  return a.spans[sc >= 0 ? sc : i];
};

/** Client span `i`'s call was inferred from the tree: its kind or its server child's was not said by the span. */
export const inferredCall = (a: TraceAccount, i: number): boolean =>
  a.inferredKind.length > 0 &&
  (a.inferredKind[i] === 1 || (a.tree.serverChild[i] >= 0 && a.inferredKind[a.tree.serverChild[i]] === 1));

/**
 * Client span `i`'s call into `h` was inferred from the tree (either side said no kind): the hop's evidence says so,
 * once per trace, so a finding booked through the call is read as what it is.
 */
export function noteInferredCall(a: TraceAccount, h: HopAccount, i: number): void {
  if (!inferredCall(a, i) || a.inferredNoted.has(h)) return;
  a.inferredNoted.add(h);
  const sc = a.tree.serverChild[i];
  const s = a.spans[i];
  const callee = sc >= 0 ? a.spans[sc] : undefined;
  const where = callee
    ? `${callee.service}'s span "${callee.name}" runs under ${s.service}'s "${s.name}" on another ${callee.service === s.service ? 'pod' : 'service'}`
    : `"${s.name}" calls ${h.service}`;
  h.evidence.push({
    kind: 'inferred_call',
    summary: `${s.service} → ${h.service}: call inferred from the tree (no span kinds): ${where}`,
    spanId: s.spanId,
  });
}

const lookups = new WeakMap<Baseline, (s: Span) => OperationBaseline | undefined>();
const NONE = (): undefined => undefined;
/** Baseline entry of a span through nested maps: no key string built per span (50k-span traces). */
function baselineLookup(b: Baseline | undefined): (s: Span) => OperationBaseline | undefined {
  if (!b) return NONE;
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

export interface AnalyzeContext {
  baseline?: Baseline;
  kernel?: KernelIndex;
  config: RcaConfig;
  engineState?: EngineStateLookup;
}

const EMPTY_TREE: TraceTree = {
  spans: [],
  parent: new Int32Array(0),
  children: [],
  roots: [],
  orphans: [],
  start: new Float64Array(0),
  end: new Float64Array(0),
  cStart: new Float64Array(0),
  cEnd: new Float64Array(0),
  async: new Uint8Array(0),
  skewMs: new Float64Array(0),
  self: new Float64Array(0),
  gap: new Float64Array(0),
  serverChild: new Int32Array(0),
  order: [],
  duplicates: 0,
};

/** A fresh account for `spans`; the tree pass replaces the placeholder tree and arrays sized to the trace. */
export function openAccount(spans: Span[], ctx: AnalyzeContext): TraceAccount {
  return {
    config: ctx.config,
    engineState: ctx.engineState,
    baseline: ctx.baseline,
    kernel: ctx.kernel,
    opOf: baselineLookup(ctx.baseline),
    spans,
    tree: EMPTY_TREE,
    root: 0,
    anchor: 0,
    anchorReason: 'trace root',
    anchorDurationMs: 0,
    inAnchor: new Uint8Array(0),
    degradations: [],
    degraded: new Uint8Array(0),
    path: [],
    onPathMs: new Float64Array(0),
    criticalPath: [],
    excessMs: new Float64Array(0),
    z: new Float64Array(0),
    bookedOn: [],
    callerSide: new Uint8Array(0),
    slowCallers: new Map(),
    origins: [],
    hops: new Map(),
    hopsByService: new Map(),
    missing: [],
    ops: [],
    spanHop: [],
    peerHop: [],
    llm: [],
    inferredKind: new Uint8Array(0),
    inferredNoted: new Set(),
  };
}
