import type { KernelEvent } from '../../../contract';

/** Kernel events counted by type. */
export function countByType(events: KernelEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  return counts;
}
