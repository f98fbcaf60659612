import { z } from 'zod';
import { EvidenceKind } from './evidence';
import { Span } from './traces';

export const Evidence = z
  .object({
    kind: EvidenceKind, // labels and meanings: EVIDENCE_KINDS in ./evidence
    summary: z.string(),
  })
  .catchall(z.unknown());
export type Evidence = z.infer<typeof Evidence>;

export const Candidate = z.object({
  rank: z.number().int().positive(),
  service: z.string(),
  pod: z.string(),
  spanId: z.string().optional(),
  operation: z.string().optional(),
  score: z.number(),
  selfMs: z.number().optional(),
  baselineMs: z.number().optional(),
  evidence: z.array(Evidence),
});
export type Candidate = z.infer<typeof Candidate>;

/**
 * One span on the critical path, in order of first appearance (the anchor first, each span after the one it runs
 * under). Times are the span's own clock; `skewCorrectedMs` is how far the engine shifted it to fit its parent.
 */
export const CriticalPathItem = z.object({
  spanId: z.string(),
  /** The span's parent in the trace (absent for the trace's roots and orphans). */
  parentSpanId: z.string().optional(),
  /** Depth below the anchor (0 = the anchor). */
  depth: z.number().int().nonnegative(),
  service: z.string(),
  pod: z.string(),
  operation: z.string(),
  kind: Span.shape.kind,
  status: Span.shape.status,
  startMs: z.number(),
  endMs: z.number(),
  durationMs: z.number(),
  /** Exclusive time: the span's window minus the union of its synchronous children. */
  selfMs: z.number(),
  /** Time the critical path spends in this span itself. */
  onPathMs: z.number(),
  /** Client span: its duration minus its server child's (network, TLS, queueing). */
  gapMs: z.number().optional(),
  baselineSelfMs: z.number().optional(),
  skewCorrectedMs: z.number().optional(),
});
export type CriticalPathItem = z.infer<typeof CriticalPathItem>;

/** A root-cause answer for one trace (GET /traces/:id/rca) or an incident window (POST /rca, no path). */
export const RcaAnswer = z.object({
  traceId: z.string().optional(),
  tookMs: z.number().nonnegative(),
  criticalPath: z.array(CriticalPathItem),
  candidates: z.array(Candidate),
  missing: z.array(z.string()),
});
export type RcaAnswer = z.infer<typeof RcaAnswer>;
