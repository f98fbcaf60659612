/** Query parameters of /events and /events/stream, validated: a bad value is a 400 with the reason. */
import { z } from 'zod';
import { KernelEventType } from '../../../contract';
import { formatZodError } from '../../../contract/zod-error';
import type { EventFilter } from '../core/ring';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Epoch ms, or Grafana-style `now`, `now-15m`. */
export function parseTime(v: string, now = Date.now()): number | undefined {
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const m = /^now(?:-(\d+)(ms|s|m|h|d))?$/.exec(v);
  if (!m) return undefined;
  return m[1] ? now - Number(m[1]) * UNITS[m[2]] : now;
}

const time = z.string().transform((v, ctx) => {
  const t = parseTime(v);
  if (t === undefined) {
    ctx.addIssue({ code: 'custom', message: `not a time: "${v}" (epoch ms or now-15m)` });
    return z.NEVER;
  }
  return t;
});

const Query = z
  .object({
    from: time.optional(),
    to: time.optional(),
    pod: z.string().min(1).max(253).optional(),
    pid: z.string().regex(/^\d+$/, 'pid must be a non-negative integer').transform(Number).optional(),
    type: z
      .string()
      .transform((v, ctx) => {
        const types = v.split(',').filter(Boolean);
        for (const t of types)
          if (!KernelEventType.safeParse(t).success)
            ctx.addIssue({
              code: 'custom',
              message: `unknown type "${t}"; known: ${KernelEventType.options.join(', ')}`,
            });
        return types as KernelEventType[];
      })
      .optional(),
    traceId: z
      .string()
      .regex(/^[0-9a-f]{32}$/, 'traceId must be 32 lowercase hex digits')
      .optional(),
    limit: z.string().regex(/^\d+$/, 'limit must be a positive integer').transform(Number).optional(),
    /** `notable`: only the events recorded as notable (KERNEL_EVENT_TYPES); `all` (default): every event. */
    class: z.enum(['notable', 'all']).optional(),
    /** Resume: events after this sequence number (the `seq` of the last event the consumer has). */
    after: z
      .string()
      .regex(/^\d{1,16}$/, 'after must be an event sequence number')
      .transform(Number)
      .optional(),
  })
  .strict();

export type ParsedQuery = { filter: EventFilter; limit: number; after?: number } | { error: string };

export function parseEventQuery(q: unknown, opts: { maxRangeMs: number; maxLimit: number }, live = false): ParsedQuery {
  const r = Query.safeParse(q);
  if (!r.success) return { error: formatZodError(r.error, { root: 'query' }) };
  const { from, to, pod, pid, type, traceId, limit, after } = r.data;
  if (live && (from !== undefined || to !== undefined)) return { error: 'from/to do not apply to the live stream' };
  if (from !== undefined && to !== undefined) {
    if (from > to) return { error: `from (${from}) is after to (${to})` };
    if (to - from > opts.maxRangeMs) return { error: `range too wide: ${to - from} ms > ${opts.maxRangeMs} ms` };
  }
  if (limit !== undefined && (limit < 1 || limit > opts.maxLimit))
    return { error: `limit must be in [1, ${opts.maxLimit}]` };
  const filter: EventFilter = { from, to, pod, pid, types: type, traceId };
  if (r.data.class === 'notable') filter.notable = true;
  return { filter, limit: limit ?? Math.min(1000, opts.maxLimit), after };
}
