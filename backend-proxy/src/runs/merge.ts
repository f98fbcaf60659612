/**
 * A run's outcome from its workers' reports, with no I/O. One worker: its own summary, exactly. Several: counts and
 * rates add exactly; end-to-end and TTFT percentiles come from the merged sketches (contract/sketch.ts, within the
 * sketch's alpha) and the record says `percentiles: 'bucketed'`; figures that cannot be merged (ITL/TPOT percentiles,
 * which have no sketch) are null rather than invented.
 */
import {
  judgeFallbackCompletion,
  mergeFallback,
  mergeSketches,
  sketchSummary,
  thresholdValue,
  type AppliedFault,
  type ClientSummary,
  type LatencySketch,
  type LatencySummary,
  type RegressionVerdict,
  type RunFinish,
  type RunRecord,
  type RunRequest,
  type RunStatus,
  type ThresholdVerdict,
} from '../../../contract';
import type { ListFigures } from '../domain/runs';

/** The record keeps at most this many slowest and failed requests (as each worker does). */
export const MAX_KEPT_REQUESTS = 100;
const MAX_NOTES = 100;

export type WorkerStatus = RunStatus;

/** One worker as stored: its registration's planned faults, its finish report if it sent one. */
export interface WorkerResult {
  workerId: string;
  status: WorkerStatus;
  startMs: number;
  lastHeartbeatMs: number;
  finish: RunFinish | null;
  /** Why it was aborted when it sent no finish (no heartbeat since …). */
  abortReason: string | null;
  plannedFaults: AppliedFault[];
}

export interface MergedRun {
  status: RunStatus;
  endMs: number | null;
  summary: ClientSummary | null;
  merge: RunRecord['merge'];
  thresholds: ThresholdVerdict[];
  regressions: RegressionVerdict[];
  faults: AppliedFault[];
  slowest: RunRequest[];
  failed: RunRequest[];
  abortReason: string | null;
}

export type { ListFigures };

export function listFigures(s: ClientSummary | null): ListFigures {
  if (!s)
    return {
      durationS: null,
      targetRps: null,
      achievedRps: null,
      ttftP99Ms: null,
      e2eP99Ms: null,
      goodputRatio: null,
      errors: null,
      errorRate: null,
    };
  return {
    durationS: s.durationS,
    targetRps: s.rps.targetMean,
    achievedRps: s.rps.completed,
    ttftP99Ms: s.ttftMs.p99,
    e2eP99Ms: s.latencyMs.p99,
    goodputRatio: s.goodput.ratio,
    errors: s.errors.total,
    errorRate: s.sent ? s.errors.total / s.sent : null,
  };
}

/** A threshold/regression metric (the load generator's names, e.g. `p99_ms`, `error_rate`) read from a summary. */
export const metricValue = (s: ClientSummary, metric: string): number | null => thresholdValue(s, metric);

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const maxOrNull = (xs: Array<number | null>): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
};
const r4 = (v: number): number => Number(v.toFixed(4));

/** Count-weighted mean of the parts' means (exact: Σ mean·count / Σ count). */
function weightedMean(parts: LatencySummary[]): number | null {
  const withMean = parts.filter((p) => p.count > 0 && p.mean !== null);
  const n = sum(withMean.map((p) => p.count));
  return n ? Number((sum(withMean.map((p) => p.mean! * p.count)) / n).toFixed(3)) : null;
}

interface Part {
  workerId: string;
  summary: ClientSummary;
}

/**
 * One latency measurement over several workers. Only one worker measured anything: its figures, exact. Every worker
 * that measured sent a sketch: percentiles from the merged sketch. Otherwise count, mean and max exact and the
 * percentiles null (a note says which worker lacked a sketch).
 */
function mergeLatency(
  parts: Part[],
  pick: (s: ClientSummary) => LatencySummary,
  sketchOf: ((s: ClientSummary) => LatencySketch | undefined) | undefined,
  label: string,
  notes: string[]
): { summary: LatencySummary; sketch?: LatencySketch; bucketed: boolean } {
  const measured = parts.filter((p) => pick(p.summary).count > 0);
  if (measured.length <= 1) {
    const only = measured[0];
    const sketch = only && sketchOf ? sketchOf(only.summary) : undefined;
    return {
      summary: only
        ? pick(only.summary)
        : { count: 0, mean: null, p50: null, p90: null, p95: null, p99: null, max: null },
      sketch,
      bucketed: false,
    };
  }
  const ls = measured.map((p) => pick(p.summary));
  const exact = { count: sum(ls.map((l) => l.count)), mean: weightedMean(ls), max: maxOrNull(ls.map((l) => l.max)) };
  const sketches = sketchOf ? measured.map((p) => sketchOf(p.summary)) : [];
  if (sketchOf && sketches.every((s): s is LatencySketch => s !== undefined)) {
    const merged = sketches.slice(1).reduce(mergeSketches, sketches[0]);
    const fromSketch = sketchSummary(merged);
    return { summary: { ...fromSketch, ...exact }, sketch: merged, bucketed: true };
  }
  const lacking = sketchOf ? measured.filter((p) => !sketchOf(p.summary)).map((p) => p.workerId) : [];
  notes.push(
    sketchOf
      ? `${label} percentiles are not merged: worker(s) ${lacking.join(', ')} sent no sketch`
      : `${label} percentiles cannot be merged across workers (no sketch in the contract): count, mean and max only`
  );
  return { summary: { ...exact, p50: null, p90: null, p95: null, p99: null }, bucketed: false };
}

/** Several workers' summaries as one. With one part, that part unchanged. */
export function mergeSummaries(parts: Part[]): {
  summary: ClientSummary;
  percentiles: 'exact' | 'bucketed';
  notes: string[];
} {
  if (!parts.length) throw new Error('mergeSummaries: no summaries');
  if (parts.length === 1) return { summary: parts[0].summary, percentiles: 'exact', notes: [] };
  const ss = parts.map((p) => p.summary);
  const notes: string[] = [];
  const e2e = mergeLatency(
    parts,
    (s) => s.latencyMs,
    (s) => s.sketches?.e2e,
    'end-to-end',
    notes
  );
  const ttft = mergeLatency(
    parts,
    (s) => s.ttftMs,
    (s) => s.sketches?.ttft,
    'TTFT',
    notes
  );
  const itl = mergeLatency(parts, (s) => s.itlMs, undefined, 'ITL', notes);
  const tpot = mergeLatency(parts, (s) => s.tpotMs, undefined, 'TPOT', notes);
  const sent = sum(ss.map((s) => s.sent));
  const byKind: Record<string, number> = {};
  for (const s of ss) for (const [k, v] of Object.entries(s.errors.byKind)) byKind[k] = (byKind[k] ?? 0) + v;
  const good = sum(ss.map((s) => s.goodput.good));
  const lateOver = sum(ss.map((s) => s.schedule.lateOver10ms));
  const lateP99s = ss.map((s) => s.schedule.lateP99Ms);
  if (lateP99s.filter((v) => v !== null).length > 1)
    notes.push('schedule lateness P99 is the largest worker P99 (an upper bound)');
  const withQuality = ss.filter((s) => s.quality);
  const weighted = (xs: Array<{ v: number | null; n: number }>): { value: number | null; n: number } => {
    const known = xs.filter((x) => x.v !== null && x.n > 0);
    const n = sum(known.map((x) => x.n));
    return { value: n ? r4(sum(known.map((x) => x.v! * x.n)) / n) : null, n: sum(xs.map((x) => x.n)) };
  };
  const recall = weighted(withQuality.map((s) => ({ v: s.quality!.ragRecall.mean, n: s.quality!.ragRecall.n })));
  const task = weighted(
    withQuality.map((s) => ({ v: s.quality!.agentTaskCompletion.rate, n: s.quality!.agentTaskCompletion.n }))
  );
  const fallback = mergeFallback(ss.flatMap((s) => (s.fallback ? [s.fallback] : [])));
  const workerNotes = parts.flatMap((p) => p.summary.notes.map((n) => `[${p.workerId}] ${n}`));
  const summary: ClientSummary = {
    // Workers run side by side: the run lasts as long as the longest, and rates add.
    durationS: Math.max(...ss.map((s) => s.durationS)),
    sent,
    completed: sum(ss.map((s) => s.completed)),
    succeeded: sum(ss.map((s) => s.succeeded)),
    degraded: sum(ss.map((s) => s.degraded)),
    errors: { total: sum(ss.map((s) => s.errors.total)), byKind },
    timeouts: sum(ss.map((s) => s.timeouts)),
    droppedClientSide: sum(ss.map((s) => s.droppedClientSide)),
    rps: {
      targetMean: r4(sum(ss.map((s) => s.rps.targetMean))),
      sent: r4(sum(ss.map((s) => s.rps.sent))),
      completed: r4(sum(ss.map((s) => s.rps.completed))),
    },
    latencyMs: e2e.summary,
    ttftMs: ttft.summary,
    itlMs: itl.summary,
    tpotMs: tpot.summary,
    outputTokens: sum(ss.map((s) => s.outputTokens)),
    outputTokensPerS: r4(sum(ss.map((s) => s.outputTokensPerS))),
    goodput: { good, rps: r4(sum(ss.map((s) => s.goodput.rps))), ratio: sent ? r4(good / sent) : 0 },
    schedule: {
      lateOver10ms: lateOver,
      lateRatio: sent ? r4(lateOver / sent) : 0,
      lateP99Ms: maxOrNull(lateP99s),
      lateMaxMs: maxOrNull(ss.map((s) => s.schedule.lateMaxMs)),
    },
    ...(withQuality.length
      ? {
          quality: {
            ragRecall: { mean: recall.value, n: recall.n },
            agentTaskCompletion: { rate: task.value, n: task.n },
          },
        }
      : {}),
    untraced: sum(ss.map((s) => s.untraced)),
    ...(e2e.sketch && ttft.sketch ? { sketches: { e2e: e2e.sketch, ttft: ttft.sketch } } : {}),
    ...(fallback ? { fallback } : {}),
    notes: [...notes, ...workerNotes].slice(0, MAX_NOTES),
  };
  return { summary, percentiles: e2e.bucketed || ttft.bucketed ? 'bucketed' : 'exact', notes };
}

/** A worker that judged a threshold failed fails it for the run; `actual` is the merged figure. */
function mergeThresholds(finishes: RunFinish[], merged: ClientSummary | null): ThresholdVerdict[] {
  const by = new Map<string, ThresholdVerdict>();
  for (const f of finishes) {
    for (const t of f.thresholds) {
      const cur = by.get(t.threshold);
      if (!cur) by.set(t.threshold, { ...t, actual: merged ? (metricValue(merged, t.metric) ?? t.actual) : t.actual });
      else cur.pass &&= t.pass;
    }
  }
  return [...by.values()];
}

/** A within-run rule (fallback_completion) with both figures from the merged paths; passes only if every worker passed. */
function fallbackVerdict(r: RegressionVerdict, merged: ClientSummary | null): RegressionVerdict {
  if (!merged?.fallback) return { ...r };
  const m = /^([+-])([0-9.]+)(%?)$/.exec(r.allowed);
  const rule = m ? { direction: m[1] as '+' | '-', amount: Number(m[2]), relative: m[3] === '%' } : undefined;
  const j = judgeFallbackCompletion(rule ?? { direction: '-', amount: 0, relative: false }, merged.fallback);
  const delta = j.primary !== null && j.fallback !== null ? r4(j.fallback - j.primary) : null;
  return {
    ...r,
    baseline: j.primary !== null ? r4(j.primary) : null,
    actual: j.fallback !== null ? r4(j.fallback) : null,
    delta,
    deltaRatio: delta !== null && j.primary ? r4(delta / j.primary) : null,
  };
}

function mergeRegressions(finishes: RunFinish[], merged: ClientSummary | null): RegressionVerdict[] {
  const by = new Map<string, RegressionVerdict>();
  for (const f of finishes) {
    for (const r of f.regressions) {
      const key = `${r.metric}\u0000${r.allowed}`;
      const cur = by.get(key);
      if (cur) {
        cur.pass &&= r.pass;
        continue;
      }
      if (r.versus === 'primary_path') {
        by.set(key, fallbackVerdict(r, merged));
        continue;
      }
      const actual = merged ? (metricValue(merged, r.metric) ?? r.actual) : r.actual;
      const delta = actual !== null && r.baseline !== null ? actual - r.baseline : null;
      by.set(key, { ...r, actual, delta, deltaRatio: delta !== null && r.baseline ? delta / r.baseline : null });
    }
  }
  return [...by.values()];
}

const faultKey = (f: AppliedFault): string =>
  [f.target, f.kind, f.atS, f.pod ?? '', f.id ?? '', f.magnitude ?? ''].join('\u0000');
function uniqueFaults(fs: AppliedFault[]): AppliedFault[] {
  const seen = new Map<string, AppliedFault>();
  for (const f of fs) if (!seen.has(faultKey(f))) seen.set(faultKey(f), f);
  return [...seen.values()].sort((a, b) => a.atS - b.atS);
}

/**
 * The run's status once no worker runs: failed if any worker failed; else aborted if any worker was aborted (a lost
 * worker means the load the run claims was not applied, so it cannot pass); else passed.
 */
export function runStatus(workers: Array<Pick<WorkerResult, 'status'>>): RunStatus {
  if (!workers.length || workers.some((w) => w.status === 'running')) return 'running';
  if (workers.some((w) => w.status === 'failed')) return 'failed';
  if (workers.some((w) => w.status === 'aborted')) return 'aborted';
  return 'passed';
}

/** Everything the record shows once every worker is done (status `running` while any still runs). */
export function mergeRun(workers: WorkerResult[]): MergedRun {
  const status = runStatus(workers);
  const finished = workers.filter((w): w is WorkerResult & { finish: RunFinish } => w.finish !== null);
  const parts = finished.map((w) => ({ workerId: w.workerId, summary: w.finish.summary }));
  const merged = parts.length ? mergeSummaries(parts) : null;
  const summary = merged?.summary ?? null;
  const finishes = finished.map((w) => w.finish);
  const multi = workers.length > 1;
  const applied = finishes.flatMap((f) => f.faults);
  const slowestAll = finishes.flatMap((f) => f.slowest).sort((a, b) => b.e2eMs - a.e2eMs);
  const failedAll = finishes.flatMap((f) => f.failed).sort((a, b) => a.startMs - b.startMs);
  const aborted = workers.filter((w) => w.status === 'aborted');
  const reasons = aborted.map(
    (w) =>
      w.abortReason ??
      (w.finish ? `worker ${w.workerId} was interrupted (its own report)` : `worker ${w.workerId} was aborted`)
  );
  let merge: MergedRun['merge'] = null;
  if (multi) {
    const noteParts = [
      finished.length
        ? `${workers.length} workers, ${finished.length} reported: counts and rates added exactly`
        : `${workers.length} workers, none reported a summary`,
    ];
    if (merged?.percentiles === 'bucketed')
      noteParts.push(
        "end-to-end and TTFT percentiles merged from the workers' sketches (within the sketch's relative accuracy)"
      );
    else if (finished.length === 1) noteParts.push("percentiles are the one reporting worker's own");
    noteParts.push(...(merged?.notes ?? []));
    if (finished.length)
      noteParts.push('a threshold passes only when every worker passed it; actual is the merged figure');
    if (slowestAll.length > MAX_KEPT_REQUESTS || failedAll.length > MAX_KEPT_REQUESTS)
      noteParts.push(
        `kept the ${MAX_KEPT_REQUESTS} slowest and the first ${MAX_KEPT_REQUESTS} failed requests of all workers`
      );
    merge = { workers: workers.length, percentiles: merged?.percentiles ?? 'exact', note: noteParts.join('; ') };
  }
  const ends = workers.map((w) => (w.finish ? w.finish.endMs : w.status === 'running' ? null : w.lastHeartbeatMs));
  return {
    status,
    endMs: status === 'running' ? null : maxOrNull(ends),
    summary,
    merge,
    thresholds: multi ? mergeThresholds(finishes, summary) : (finishes[0]?.thresholds ?? []),
    regressions: multi ? mergeRegressions(finishes, summary) : (finishes[0]?.regressions ?? []),
    faults: uniqueFaults(applied.length ? applied : workers.flatMap((w) => w.plannedFaults)),
    slowest: slowestAll.slice(0, MAX_KEPT_REQUESTS),
    failed: failedAll.slice(0, MAX_KEPT_REQUESTS),
    abortReason: status !== 'running' && reasons.length ? reasons.join('; ') : null,
  };
}
