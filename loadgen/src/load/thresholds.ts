/**
 * `--threshold 'p99_ms<2000'`: parsed before the run, checked against the summary after it. The metric names and the
 * grammar are the contract's (`contract/scenario.ts`), shared with scenario files and `--max-regression`.
 */
import type { ClientSummary } from '../../../contract/runs';
import { THRESHOLD_METRICS, THRESHOLD_RE, type ThresholdMetric } from '../../../contract/scenario';

export { THRESHOLD_METRICS, type ThresholdMetric };
export interface Threshold { metric: ThresholdMetric; op: '<' | '<=' | '>' | '>='; value: number; text: string }

export function parseThreshold(text: string): Threshold {
  const m = THRESHOLD_RE.exec(text);
  if (!m) throw new Error(`bad threshold ${JSON.stringify(text)}: expected <metric><op><number>, e.g. 'p99_ms<2000'`);
  if (!(m[1] in THRESHOLD_METRICS)) throw new Error(`unknown threshold metric ${m[1]}; allowed: ${Object.keys(THRESHOLD_METRICS).join(', ')}`);
  return { metric: m[1] as ThresholdMetric, op: m[2] as Threshold['op'], value: Number(m[3]), text: text.trim() };
}

/** A missing figure (null, NaN) fails: a threshold nobody could measure did not pass. */
export function checkThreshold(t: Threshold, actual: number | null): boolean {
  if (actual === null || !Number.isFinite(actual)) return false;
  switch (t.op) {
    case '<': return actual < t.value;
    case '<=': return actual <= t.value;
    case '>': return actual > t.value;
    case '>=': return actual >= t.value;
  }
}

type SummaryFigures = Pick<ClientSummary, 'sent' | 'errors' | 'timeouts' | 'latencyMs' | 'ttftMs' | 'itlMs' | 'tpotMs' | 'rps' | 'goodput' | 'schedule'>
  & Partial<Pick<ClientSummary, 'degraded' | 'quality'>>;

/** Every threshold (and regression) metric, read from a client summary — ours, or a baseline run's. */
export function thresholdValue(sum: SummaryFigures, metric: ThresholdMetric): number | null {
  const per = (n: number): number => (sum.sent ? n / sum.sent : 0);
  switch (metric) {
    case 'p50_ms': return sum.latencyMs.p50;
    case 'p90_ms': return sum.latencyMs.p90;
    case 'p95_ms': return sum.latencyMs.p95;
    case 'p99_ms': return sum.latencyMs.p99;
    case 'ttft_p50_ms': return sum.ttftMs.p50;
    case 'ttft_p99_ms': return sum.ttftMs.p99;
    case 'itl_p99_ms': return sum.itlMs.p99;
    case 'tpot_p50_ms': return sum.tpotMs.p50;
    case 'tpot_p99_ms': return sum.tpotMs.p99;
    case 'error_rate': return per(sum.errors.total);
    case 'timeout_rate': return per(sum.timeouts);
    case 'degraded_rate': return per(sum.degraded ?? 0);
    case 'rps': return sum.rps.completed;
    case 'goodput_rps': return sum.goodput.rps;
    case 'goodput_ratio': return sum.goodput.ratio;
    case 'late_ratio': return sum.schedule.lateRatio;
    case 'rag_recall': return sum.quality?.ragRecall.mean ?? null;
    case 'agent_task_completion': return sum.quality?.agentTaskCompletion.rate ?? null;
  }
}

/** SLOs for goodput: `ttft_ms<=500,e2e_ms<=2000,tpot_ms<=50` (a request is good when it meets all). */
export interface Slo { ttftMs?: number; e2eMs?: number; tpotMs?: number }
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(ttft_ms|e2e_ms|tpot_ms)\s*<=?\s*([0-9]+(?:\.[0-9]+)?)$/.exec(part);
    if (!m || Number(m[2]) <= 0) throw new Error(`bad SLO ${JSON.stringify(part)}: expected ttft_ms<=N, e2e_ms<=N or tpot_ms<=N with N > 0`);
    if (m[1] === 'ttft_ms') slo.ttftMs = Number(m[2]);
    if (m[1] === 'e2e_ms') slo.e2eMs = Number(m[2]);
    if (m[1] === 'tpot_ms') slo.tpotMs = Number(m[2]);
  }
  return slo;
}
