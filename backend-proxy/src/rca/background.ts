/**
 * The full healthy baseline: per-operation statistics plus each service's chronic anomaly level, measured by running
 * the same analysis over the healthy traffic itself (a service that is "anomalous" 10% of the time when all is well
 * should not top an incident ranking for that alone).
 */
import type { Span } from '../../../contract';
import { analyzeTrace } from './analyze';
import { type Baseline, baselineStats, groupByTrace } from './baseline';
import { type RcaConfigInput, resolveConfig } from './config';

export function buildBaseline(
  spans: Span[] | Span[][],
  config?: RcaConfigInput,
  opts: { background?: boolean } = {}
): Baseline {
  const traces = spans.length && Array.isArray(spans[0]) ? (spans as Span[][]) : groupByTrace(spans as Span[]);
  const b = baselineStats(traces);
  // Only window RCA reads the chronic level; per-trace callers can skip this second pass.
  if (opts.background === false) return b;
  const c = resolveConfig(config);
  let total = 0;
  const acc = new Map<string, { excess: number; errors: number }>();
  for (const tr of traces) {
    if (!tr.length) continue;
    const a = analyzeTrace(tr, { baseline: b, config: c });
    total += a.anchorDurationMs;
    for (const h of a.hops.values()) {
      const x = acc.get(h.service) ?? { excess: 0, errors: 0 };
      x.excess += h.weightedExcessMs;
      x.errors += h.errorScore;
      acc.set(h.service, x);
    }
  }
  const background: NonNullable<Baseline['background']> = {};
  for (const k of [...acc.keys()].sort()) {
    const x = acc.get(k)!;
    background[k] = {
      latencyShare: total > 0 ? x.excess / total : 0,
      errorShare: traces.length ? x.errors / traces.length : 0,
    };
  }
  return { ...b, background };
}
