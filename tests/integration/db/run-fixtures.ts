/** Load-test reports as a worker of `hopscope-load` sends them, built from latencies (with sketches), for db tests and the bench. */
import {
  emptySketch,
  sketchAdd,
  type ClientSummary,
  type LatencySummary,
  type RunFinish,
  type RunRegistration,
} from '../../../contract';

export function registration(runId: string, workerId = 'w1', o: Partial<RunRegistration> = {}): RunRegistration {
  return {
    runId,
    scenario: 'steady-chat',
    workerId,
    startMs: 1_750_000_000_000,
    target: 'http://127.0.0.1:3310/v1/chat/completions',
    options: { rps: 20, durationS: 60, arrivals: 'poisson' },
    thresholds: ['p99_ms<2000'],
    faults: [],
    ...o,
  };
}

const rank = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

function exact(xs: number[]): LatencySummary {
  if (!xs.length) return { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null };
  const s = [...xs].sort((a, b) => a - b);
  return {
    count: s.length,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    p50: rank(s, 0.5),
    p90: rank(s, 0.9),
    p95: rank(s, 0.95),
    p99: rank(s, 0.99),
    max: s.at(-1)!,
  };
}

/** Deterministic latencies: `n` values spread around `medianMs` (a fixed pseudo-random walk). */
export function latencies(n: number, medianMs: number, seed = 1): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return medianMs * (0.5 + 1.5 * (x / 2147483648) ** 2);
  });
}

export function summary(e2e: number[], o: { errors?: number; durationS?: number } = {}): ClientSummary {
  const errors = o.errors ?? 0;
  const durationS = o.durationS ?? 60;
  const sent = e2e.length + errors;
  const ttft = e2e.map((v) => v / 4);
  const sk = (xs: number[]) => {
    const s = emptySketch();
    for (const v of xs) sketchAdd(s, v);
    return s;
  };
  return {
    durationS,
    sent,
    completed: e2e.length,
    succeeded: e2e.length,
    degraded: 0,
    errors: { total: errors, byKind: errors ? { http_503: errors } : {} },
    timeouts: 0,
    droppedClientSide: 0,
    rps: { targetMean: sent / durationS, sent: sent / durationS, completed: e2e.length / durationS },
    latencyMs: exact(e2e),
    ttftMs: exact(ttft),
    itlMs: exact(e2e.map((v) => v / 80)),
    tpotMs: exact(e2e.map((v) => v / 40)),
    outputTokens: e2e.length * 64,
    outputTokensPerS: (e2e.length * 64) / durationS,
    goodput: { good: e2e.length, rps: e2e.length / durationS, ratio: sent ? e2e.length / sent : 0 },
    schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 3 },
    untraced: 0,
    sketches: { e2e: sk(e2e), ttft: sk(ttft) },
    notes: [],
  };
}

export function finish(
  workerId: string,
  e2e: number[],
  o: { status?: RunFinish['status']; endMs?: number; errors?: number; threshold?: boolean } = {}
): RunFinish {
  const s = summary(e2e, { errors: o.errors });
  const p99 = s.latencyMs.p99 ?? 0;
  const slowest = [...e2e]
    .sort((a, b) => b - a)
    .slice(0, 20)
    .map((v, i) => ({
      traceId: (i + 1).toString(16).padStart(32, '0'),
      traceIdSource: 'sent' as const,
      startMs: 1_750_000_000_000 + i,
      e2eMs: v,
      ttftMs: v / 4,
      outcome: 'ok' as const,
    }));
  return {
    workerId,
    endMs: o.endMs ?? 1_750_000_060_000,
    status: o.status ?? 'passed',
    summary: s,
    thresholds:
      o.threshold === false ? [] : [{ threshold: 'p99_ms<2000', metric: 'p99_ms', actual: p99, pass: p99 < 2000 }],
    regressions: [],
    faults: [],
    slowest,
    failed: [],
  };
}
