/**
 * Threshold and regression metrics (`--threshold 'p99_ms<2000'`, `--max-regression p99_ms:+10%`), read from a client
 * summary: the load generator judges its own run with these, the proxy judges a merged multi-worker run with the same
 * ones. The catalogue of names is `THRESHOLD_METRICS` (in ./scenario, beside the grammar that scenario files use).
 */
import { analyseCapacity } from './capacity-analysis';
import { pathTotals, taskCompletion } from './fallback';
import type { ClientSummary } from './runs';
import { THRESHOLD_METRICS, type ThresholdMetric } from './scenario';

/** The figures a metric is read from: a run's summary, or an older baseline's (which may lack `degraded`, `quality`). */
export type ThresholdFigures = Pick<
  ClientSummary,
  'sent' | 'errors' | 'timeouts' | 'latencyMs' | 'ttftMs' | 'itlMs' | 'tpotMs' | 'rps' | 'goodput' | 'schedule'
> &
  Partial<Pick<ClientSummary, 'degraded' | 'quality' | 'steps' | 'fallback'>>;

const per = (s: ThresholdFigures, n: number): number => (s.sent ? n / s.sent : 0);

/** How each metric is read; a `Record` over the catalogue, so a new metric without a reading does not compile. */
const READ: Record<ThresholdMetric, (s: ThresholdFigures) => number | null> = {
  p50_ms: (s) => s.latencyMs.p50,
  p90_ms: (s) => s.latencyMs.p90,
  p95_ms: (s) => s.latencyMs.p95,
  p99_ms: (s) => s.latencyMs.p99,
  ttft_p50_ms: (s) => s.ttftMs.p50,
  ttft_p99_ms: (s) => s.ttftMs.p99,
  itl_p99_ms: (s) => s.itlMs.p99,
  tpot_p50_ms: (s) => s.tpotMs.p50,
  tpot_p99_ms: (s) => s.tpotMs.p99,
  error_rate: (s) => per(s, s.errors.total),
  timeout_rate: (s) => per(s, s.timeouts),
  degraded_rate: (s) => per(s, s.degraded ?? 0),
  rps: (s) => s.rps.completed,
  goodput_rps: (s) => s.goodput.rps,
  goodput_ratio: (s) => s.goodput.ratio,
  late_ratio: (s) => s.schedule.lateRatio,
  rag_recall: (s) => s.quality?.ragRecall.mean ?? null,
  agent_task_completion: (s) => s.quality?.agentTaskCompletion.rate ?? null,
  capacity_rps: (s) => (s.steps?.length ? analyseCapacity(s.steps).maxGoodRps : null),
  fallback_completion: (s) => (s.fallback ? taskCompletion(pathTotals(s.fallback, 'fallback')) : null),
};

/** A name of the catalogue (`p99_ms`, `error_rate`…). */
export const isThresholdMetric = (name: string): name is ThresholdMetric => Object.hasOwn(THRESHOLD_METRICS, name);

/** A threshold/regression metric read from a summary; null when the summary cannot say (or the name is not a metric). */
export function thresholdValue(summary: ThresholdFigures, metric: string): number | null {
  return isThresholdMetric(metric) ? READ[metric](summary) : null;
}
