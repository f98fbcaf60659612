import { z } from 'zod';

/** Every error any Hopscope service returns: `{error: {code, message}}` with a 4xx/5xx status. */
export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Per-source outcome attached to merged answers, so one dead source degrades one panel, not the page. */
export const SourceStatus = z.object({
  source: z.string(),
  ok: z.boolean(),
  latencyMs: z.number().nonnegative().optional(),
  error: z.string().optional(),
});
export type SourceStatus = z.infer<typeof SourceStatus>;

export const HealthAnswer = z.object({
  ok: z.boolean(),
  version: z.string().optional(),
  sources: z.array(SourceStatus),
});
export type HealthAnswer = z.infer<typeof HealthAnswer>;
