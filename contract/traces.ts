import { z } from 'zod';

export const TraceStatus = z.enum(['ok', 'error', 'timeout', 'unset']);
export type TraceStatus = z.infer<typeof TraceStatus>;

/** A trace in a list: the contract's minimum, more fields welcome. */
export const TraceSummary = z.object({
  traceId: z.string(),
  rootService: z.string(),
  rootName: z.string(),
  startMs: z.number(),
  durationMs: z.number().nonnegative(),
  status: TraceStatus,
  spanCount: z.number().int().nonnegative().optional(),
  services: z.array(z.string()).optional(),
});
export type TraceSummary = z.infer<typeof TraceSummary>;

export const TraceList = z.object({ traces: z.array(TraceSummary) });
export type TraceList = z.infer<typeof TraceList>;

/** A span normalised from OTLP / Tempo v1 / Tempo v2 into one shape (hex ids, epoch-ms floats). */
export const Span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  service: z.string(),
  kind: z.enum(['internal', 'server', 'client', 'producer', 'consumer', 'unspecified']),
  startMs: z.number(),
  endMs: z.number(),
  status: TraceStatus,
  statusMessage: z.string().optional(),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  resource: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
export type Span = z.infer<typeof Span>;

export const TraceDetail = z.object({
  traceId: z.string(),
  spans: z.array(Span),
  partial: z.boolean().optional(),
});
export type TraceDetail = z.infer<typeof TraceDetail>;
