import { z } from 'zod';

export const Evidence = z
  .object({
    kind: z.string(), // e.g. self_time, client_server_gap, kernel:tcp_retransmit, error, broken_propagation
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

/** A root-cause answer for one trace (GET /traces/:id/rca) or an incident window (POST /rca). */
export const RcaAnswer = z.object({
  traceId: z.string().optional(),
  tookMs: z.number().nonnegative(),
  criticalPath: z.array(z.unknown()),
  candidates: z.array(Candidate),
  missing: z.array(z.string()),
});
export type RcaAnswer = z.infer<typeof RcaAnswer>;
