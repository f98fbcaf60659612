/**
 * A run's capacity for people and for the JSON: the client's own analysis of its steps, replaced by the proxy's
 * (which adds the hops' saturation signals from Prometheus) once the run record is delivered.
 */
import { Capacity } from '../../../contract/capacity';
import type { ProxyClient } from './proxy-client';

const rps = (v: number | null): string => (v === null ? 'none' : `${Number(v.toFixed(2))} req/s`);

/** "capacity 8 req/s (SLOs held), knee at 10 req/s (42 s in): llm-vllm pod llm-vllm-…-0, engine_queue — evidence". */
export function describeCapacity(c: Capacity, startMs?: number): string {
  const knee =
    c.kneeRps === null
      ? 'no knee'
      : `knee at ${rps(c.kneeRps)}${c.kneeAtMs !== null && startMs !== undefined ? ` (${Math.round((c.kneeAtMs - startMs) / 1000)} s in)` : ''}`;
  const b = c.bottleneck;
  const where = b
    ? `; bottleneck: ${b.service ?? 'unknown hop'}${b.pod ? ` pod ${b.pod}` : ''}, ${b.resource} — ${b.evidence}`
    : '';
  const next = c.next
    ? `; next: ${c.next.service ?? '?'}${c.next.pod ? ` pod ${c.next.pod}` : ''}, ${c.next.resource}`
    : '';
  return `capacity ${rps(c.maxGoodRps)} (highest rate with SLOs held), ${knee}${where}${next}${c.note ? ` (${c.note})` : ''}`;
}

/** The proxy's capacity of a delivered run; undefined when it cannot say (old proxy, unreachable, no steps). */
export async function proxyCapacity(client: ProxyClient, runId: string): Promise<Capacity | undefined> {
  try {
    const a = await client.call('GET', `/api/runs/${encodeURIComponent(runId)}`);
    const c = (a.body as { capacity?: unknown } | null)?.capacity;
    if (a.status !== 200 || !c) return undefined;
    const parsed = Capacity.safeParse(c);
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
