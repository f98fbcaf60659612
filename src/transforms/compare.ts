/** A/B compare answer → overlaid histograms and hot-zone bands on the shared time axis. */
import type { CompareAnswer, CompareSide } from '../../contract';
import type { Histogram } from './histogram';

export function sideLabel(side: CompareSide, fallback: string): string {
  const s = side.selector;
  const parts = [s.backend, s.model, s.service].filter(Boolean);
  return parts.length ? parts.join(' · ') : fallback;
}

/** The proxy bins both sides on the same edges; bucket i spans edges[i]..edges[i+1]. */
export function compareHistograms(answer: CompareAnswer): [Histogram, Histogram] {
  const edges = answer.bucketEdgesMs;
  const toHist = (side: CompareSide): Histogram => {
    const counts = edges.slice(0, -1).map((_, i) => side.histogram[i] ?? 0);
    return { edges, counts, total: counts.reduce((a, b) => a + b, 0) };
  };
  return [toHist(answer.a), toHist(answer.b)];
}

export interface StatRow {
  stat: string;
  a: number | null;
  b: number | null;
  /** (b - a) / a, or null when either side is missing. */
  change: number | null;
}

export function compareStats(answer: CompareAnswer): StatRow[] {
  const row = (stat: string, a: number | null, b: number | null): StatRow => ({
    stat,
    a,
    b,
    change: a !== null && b !== null && a > 0 ? (b - a) / a : null,
  });
  return [
    row('Requests', answer.a.count, answer.b.count),
    row('P50 latency (ms)', answer.a.p50Ms, answer.b.p50Ms),
    row('P99 latency (ms)', answer.a.p99Ms, answer.b.p99Ms),
    row('TTFT P50 (ms)', answer.a.ttftP50Ms, answer.b.ttftP50Ms),
    row('TTFT P99 (ms)', answer.a.ttftP99Ms, answer.b.ttftP99Ms),
  ];
}

/** Parses the proxy's selector syntax for the inputs: `backend=vllm,model=llama` ⇄ fields. */
export function parseSelector(s: string): { backend?: string; model?: string; service?: string } {
  const out: Record<string, string> = {};
  for (const part of s.split(',')) {
    const [k, ...rest] = part.split('=');
    const v = rest.join('=').trim();
    if (k && v && ['backend', 'model', 'service'].includes(k.trim())) {
      out[k.trim()] = v;
    }
  }
  return out;
}

export function formatSelector(s: { backend?: string; model?: string; service?: string }): string {
  return (['backend', 'model', 'service'] as const)
    .filter((k) => s[k])
    .map((k) => `${k}=${s[k]}`)
    .join(',');
}
