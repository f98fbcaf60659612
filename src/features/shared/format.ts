/** Small formatters shared by the views' tables. */
import { KERNEL_EVENT_TYPES, KernelEventType } from '../../../contract';

export const fmtMs = (ms: number | null | undefined): string =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

export const fmtNum = (n: number | null | undefined, digits = 1): string =>
  n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits);

export const fmtTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 23);

/** Kernel signal counts as one short cell: `TLS 12 · retrans 3 · GPU OOM 1`. */
export function kernelCell(counts: Record<string, number>): string {
  // Traced requests are how events join traces, not a signal of trouble: left out of the cell.
  const parts = Object.entries(counts)
    .filter(([k, v]) => v > 0 && k !== 'http_traceparent' && KernelEventType.safeParse(k).success)
    .map(([k, v]) => `${KERNEL_EVENT_TYPES[k as KernelEventType].short} ${v}`);
  return parts.length ? parts.join(' · ') : 'none';
}
