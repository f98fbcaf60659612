/**
 * `--threshold 'p99_ms<2000'`: parsed before the run, checked against the summary after it. The metric names, the
 * grammar and how a metric is read from a summary are the contract's (`contract/scenario.ts`,
 * `contract/thresholds.ts`), shared with scenario files, `--max-regression` and the proxy's multi-worker merge.
 */
import { THRESHOLD_METRICS, THRESHOLD_RE, type ThresholdMetric } from '../../../contract/scenario';
import { isThresholdMetric, thresholdValue } from '../../../contract/thresholds';

export { THRESHOLD_METRICS, thresholdValue, type ThresholdMetric };
export interface Threshold {
  metric: ThresholdMetric;
  op: '<' | '<=' | '>' | '>=';
  value: number;
  text: string;
}

export function parseThreshold(text: string): Threshold {
  const m = THRESHOLD_RE.exec(text);
  if (!m) throw new Error(`bad threshold ${JSON.stringify(text)}: expected <metric><op><number>, e.g. 'p99_ms<2000'`);
  if (!isThresholdMetric(m[1]))
    throw new Error(`unknown threshold metric ${m[1]}; allowed: ${Object.keys(THRESHOLD_METRICS).join(', ')}`);
  return { metric: m[1] as ThresholdMetric, op: m[2] as Threshold['op'], value: Number(m[3]), text: text.trim() };
}

/** A missing figure (null, NaN) fails: a threshold nobody could measure did not pass. */
export function checkThreshold(t: Threshold, actual: number | null): boolean {
  if (actual === null || !Number.isFinite(actual)) return false;
  switch (t.op) {
    case '<':
      return actual < t.value;
    case '<=':
      return actual <= t.value;
    case '>':
      return actual > t.value;
    case '>=':
      return actual >= t.value;
  }
}

/** SLOs for goodput: `ttft_ms<=500,e2e_ms<=2000,tpot_ms<=50` (a request is good when it meets all). */
export interface Slo {
  ttftMs?: number;
  e2eMs?: number;
  tpotMs?: number;
}
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(ttft_ms|e2e_ms|tpot_ms)\s*<=?\s*([0-9]+(?:\.[0-9]+)?)$/.exec(part);
    if (!m || Number(m[2]) <= 0)
      throw new Error(`bad SLO ${JSON.stringify(part)}: expected ttft_ms<=N, e2e_ms<=N or tpot_ms<=N with N > 0`);
    if (m[1] === 'ttft_ms') slo.ttftMs = Number(m[2]);
    if (m[1] === 'e2e_ms') slo.e2eMs = Number(m[2]);
    if (m[1] === 'tpot_ms') slo.tpotMs = Number(m[2]);
  }
  return slo;
}
