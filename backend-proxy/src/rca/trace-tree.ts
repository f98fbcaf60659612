/** The shape of a linked trace (built by tree.ts); its own module so the steps tree.ts runs (roles.ts) can name it. */
import type { Span } from '../../../contract';

export interface TraceTree {
  spans: Span[];
  /** parent index, -1 for roots (no parent id) and orphans (parent id not in the trace). */
  parent: Int32Array;
  children: number[][];
  roots: number[];
  orphans: number[];
  /** Windows after skew correction (cross-service children shifted into their parent). */
  start: Float64Array;
  end: Float64Array;
  /** The window clamped into the parent's clamped window (what the parent can have waited for). */
  cStart: Float64Array;
  cEnd: Float64Array;
  /** A child the parent did not wait for (producer/consumer, started after its parent ended, or outlived it). */
  async: Uint8Array;
  /** ms the subtree was shifted to correct clock skew (0 if not). */
  skewMs: Float64Array;
  self: Float64Array;
  /** Client span: its duration minus its server child's (the network/queue side); NaN when not a client→server pair. */
  gap: Float64Array;
  /** Index of the server child of a client span, -1 if none. */
  serverChild: Int32Array;
  /** Breadth-first order from the roots (parents before children). */
  order: number[];
  /** Spans whose id an earlier span already had (an exporter retry): linked as their own spans. */
  duplicates: number;
}
