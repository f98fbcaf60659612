/** `--threshold 'p99_ms<2000'`: parsed before the run, checked against the summary after it. */
export const THRESHOLD_METRICS = {
  p50_ms: 'end-to-end latency P50 (ms)', p90_ms: 'end-to-end latency P90 (ms)', p95_ms: 'end-to-end latency P95 (ms)', p99_ms: 'end-to-end latency P99 (ms)',
  ttft_p50_ms: 'time to first token P50 (ms)', ttft_p99_ms: 'time to first token P99 (ms)', itl_p99_ms: 'inter-token latency P99 (ms)',
  tpot_p50_ms: 'time per output token P50 (ms)', tpot_p99_ms: 'time per output token P99 (ms)',
  error_rate: 'failed / sent (0..1)', timeout_rate: 'timed out / sent (0..1)', rps: 'completed requests per second',
  goodput_rps: 'requests per second meeting every SLO', goodput_ratio: 'share of sent requests meeting every SLO (0..1)',
  late_ratio: 'share of requests sent more than 10 ms after their scheduled time',
} as const;
export type ThresholdMetric = keyof typeof THRESHOLD_METRICS;
export interface Threshold { metric: ThresholdMetric; op: '<' | '<=' | '>' | '>='; value: number; text: string }

export function parseThreshold(text: string): Threshold {
  const m = /^\s*([a-z0-9_]+)\s*(<=|>=|<|>)\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$/.exec(text);
  if (!m) throw new Error(`bad threshold ${JSON.stringify(text)}: expected <metric><op><number>, e.g. 'p99_ms<2000'`);
  if (!(m[1] in THRESHOLD_METRICS)) throw new Error(`unknown threshold metric ${m[1]}; allowed: ${Object.keys(THRESHOLD_METRICS).join(', ')}`);
  return { metric: m[1] as ThresholdMetric, op: m[2] as Threshold['op'], value: Number(m[3]), text: text.trim() };
}

export function checkThreshold(t: Threshold, actual: number): boolean {
  if (!Number.isFinite(actual)) return false;
  switch (t.op) {
    case '<': return actual < t.value;
    case '<=': return actual <= t.value;
    case '>': return actual > t.value;
    case '>=': return actual >= t.value;
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
