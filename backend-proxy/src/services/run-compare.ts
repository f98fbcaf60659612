/**
 * Which hop changed between two load-test runs: the traces of each run (found by the `hopscope.run_id` the chain puts
 * on its spans: the embedded store's run index, or a TraceQL search of Tempo), the engine's window root cause of the
 * run's traces with the baseline run's traces as the baseline, and per-hop exclusive-time percentiles of both side by
 * side (as `hops`, and as evidence on the candidates). Client-side figures come from the two run records.
 *
 * Cost is bounded: at most MAX_TRACES traces per run are read (evenly spread, `sampled: true` beyond that); what a
 * finished run's traces yield (their statistics, the baseline built from them, a whole answer) is cached while the
 * run's traces stay the same.
 */
import type { Candidate, HopDelta, RunCompareAnswer, RunRecord, Span } from '../../../contract';
import { invalid, notFound, upstream } from '../domain/errors';
import { buildBaseline, rankWindow, type Baseline, type RcaConfigInput } from '../rca';
import { SourceError } from '../sources/http';
import type { TempoSource } from '../sources/tempo';
import type { RunIndex } from '../store/run-index';
import type { TraceStore } from '../store/trace-store';
import { traceBytes, WindowBudget } from './window-budget';

/**
 * Traces read per side (the run and its baseline run): a 100-second run at 20 req/s whole; longer or faster runs are
 * sampled evenly (the notes say so). The global window budget (./window-budget.ts) bounds the compares together.
 */
export const MAX_TRACES = 2000;
const CACHE_ENTRIES = 16;
/** Spans may still arrive shortly after a run's end (exporter batches): answers are cached only after this. */
const SETTLE_MS = 15_000;

export interface RunLookup {
  get(runId: string): Promise<RunRecord | undefined>;
}

export interface RunTraces {
  traces: Span[][];
  sampled: boolean;
  /** `baselineStats` of `traces`, when the source has them cheaper than recomputing (the store's cached samples). */
  stats?: () => Baseline | undefined;
  /** Why the set is smaller than the run (evicted, unfetchable); empty when nothing to say. */
  notes: string[];
}

/** Where a run's traces are: the embedded store or Tempo. */
export interface RunTraceFinder {
  readonly source: 'embedded' | 'tempo';
  find(run: RunRecord, max: number): Promise<RunTraces>;
}

/** Every `n/max`-th element, so a sample covers the whole run, not its first minutes. */
function spread<T>(list: T[], max: number): T[] {
  if (list.length <= max) return list;
  const out: T[] = [];
  const step = list.length / max;
  for (let i = 0; i < max; i++) out.push(list[Math.floor(i * step)]);
  return out;
}

export class EmbeddedRunTraces implements RunTraceFinder {
  readonly source = 'embedded';
  constructor(
    private store: TraceStore,
    private index: RunIndex
  ) {}

  async find(run: RunRecord, max: number): Promise<RunTraces> {
    const ids = this.index.traceIds(run.runId);
    const picked = spread(ids, max);
    const traces: Span[][] = [];
    for (const id of picked) {
      const d = this.store.get(id);
      if (d?.spans.length) traces.push(d.spans);
    }
    const notes =
      ids.length > max
        ? [
            `run ${run.runId}: ${max} of its ${ids.length} traces read, evenly spread over the run (a compare reads at most ${max} per side)`,
          ]
        : [];
    return { traces, sampled: ids.length > max, notes, stats: () => this.store.statsOf(picked) };
  }
}

export class TempoRunTraces implements RunTraceFinder {
  readonly source = 'tempo';
  constructor(private tempo: TempoSource) {}

  async find(run: RunRecord, max: number): Promise<RunTraces> {
    // A little slack on both sides: the run's clock and Tempo's block times are not the same clock.
    const to = (run.endMs ?? Date.now()) + 5000;
    const got = await this.tempo.runTraces(run.runId, run.startMs - 5000, to);
    const traces = spread(got.traces, max);
    const notes: string[] = [];
    if (traces.length < got.traces.length)
      notes.push(
        `run ${run.runId}: ${max} of the ${got.traces.length} traces Tempo gave read, evenly spread (a compare reads at most ${max} per side)`
      );
    if (got.sampled)
      notes.push(
        `run ${run.runId}: a sample of ${got.traces.length} of its traces from Tempo (TraceQL span.hopscope.run_id, spread over the run)`
      );
    if (got.failed)
      notes.push(`run ${run.runId}: ${got.failed} trace(s) found by the search could not be fetched from Tempo`);
    return { traces, sampled: got.sampled || traces.length < got.traces.length, notes };
  }
}

/** Per-operation statistics of a run's traces (the engine's exclusive times) and the full baseline built from them. */
interface RunStats {
  signature: string;
  stats?: Baseline;
  baseline?: Baseline;
}

const signatureOf = (traces: Span[][]): string => {
  let spans = 0;
  let last = '';
  for (const t of traces) {
    spans += t.length;
    last = t[0]?.traceId ?? last;
  }
  return `${traces.length}:${spans}:${last}`;
};

const settled = (r: RunRecord, now: number): boolean =>
  r.status !== 'running' && r.endMs !== null && now - r.endMs > SETTLE_MS;

function hopDeltas(run: Baseline | undefined, base: Baseline | undefined): HopDelta[] {
  const keys = new Set([...Object.keys(run?.ops ?? {}), ...Object.keys(base?.ops ?? {})]);
  // One row per service + operation; an operation name used by two span kinds of one service says its kind.
  const names = new Map<string, number>();
  for (const k of keys) {
    const o = run?.ops[k] ?? base!.ops[k];
    const n = `${o.service}\u0000${o.operation}`;
    names.set(n, (names.get(n) ?? 0) + 1);
  }
  const rows: HopDelta[] = [];
  for (const k of keys) {
    const r = run?.ops[k];
    const b = base?.ops[k];
    const o = (r ?? b)!;
    const clash = (names.get(`${o.service}\u0000${o.operation}`) ?? 0) > 1;
    const num = (v: number | undefined): number | null =>
      v === undefined || !Number.isFinite(v) ? null : Number(v.toFixed(3));
    const runP50 = num(r?.self.median);
    const baseP50 = num(b?.self.median);
    rows.push({
      service: o.service,
      operation: clash ? `${o.operation} (${o.kind})` : o.operation,
      runP50Ms: runP50,
      runP99Ms: num(r?.self.p99),
      baselineP50Ms: baseP50,
      baselineP99Ms: num(b?.self.p99),
      deltaP50Ms: runP50 !== null && baseP50 !== null ? Number((runP50 - baseP50).toFixed(3)) : null,
      runCount: r?.self.count ?? 0,
      baselineCount: b?.self.count ?? 0,
    });
  }
  // The largest slow-down first; operations seen in one run only last.
  return rows.sort(
    (a, b) =>
      (b.deltaP50Ms ?? -Infinity) - (a.deltaP50Ms ?? -Infinity) ||
      a.service.localeCompare(b.service) ||
      (a.operation ?? '').localeCompare(b.operation ?? '')
  );
}

const fmt = (v: number | null): string => (v === null ? 'n/a' : `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ms`);

/** The candidate's service's operation that changed most, as one piece of evidence. */
function withDeltaEvidence(c: Candidate, hops: HopDelta[], baselineRunId: string): Candidate {
  const mine = hops.filter((h) => h.service === c.service && h.deltaP50Ms !== null);
  if (!mine.length) return c;
  const h = mine.reduce((a, b) => (Math.abs(b.deltaP50Ms!) > Math.abs(a.deltaP50Ms!) ? b : a));
  const sign = h.deltaP50Ms! >= 0 ? '+' : '−';
  return {
    ...c,
    evidence: [
      ...c.evidence,
      {
        kind: 'self_time',
        summary: `against baseline run ${baselineRunId}: own time of ${h.operation} P50 ${fmt(h.runP50Ms)} vs ${fmt(h.baselineP50Ms)} (${sign}${fmt(Math.abs(h.deltaP50Ms!))}), P99 ${fmt(h.runP99Ms)} vs ${fmt(h.baselineP99Ms)} (${h.runCount} vs ${h.baselineCount} spans)`,
        comparedWith: 'baseline_run',
        operation: h.operation,
        runP50Ms: h.runP50Ms,
        baselineP50Ms: h.baselineP50Ms,
        deltaP50Ms: h.deltaP50Ms,
        runP99Ms: h.runP99Ms,
        baselineP99Ms: h.baselineP99Ms,
      },
    ],
  };
}

const clientFigures = (r: RunRecord): RunCompareAnswer['client']['run'] => ({
  e2eP99Ms: r.e2eP99Ms,
  ttftP99Ms: r.ttftP99Ms,
  errorRate: r.errorRate,
});

export class RunCompareService {
  private perRun = new Map<string, RunStats>();
  private answers = new Map<string, { signature: string; answer: RunCompareAnswer }>();

  /** `rcaConfig`: the proxy's root-cause settings (HOPSCOPE_RCA_CONFIG), as every live root cause uses them. */
  constructor(
    private runs: RunLookup,
    private finder: RunTraceFinder,
    private maxTraces = MAX_TRACES,
    private rcaConfig?: RcaConfigInput,
    /** The global budget of window work, shared with GET /api/rca (default: one of its own). */
    private windows: WindowBudget = new WindowBudget()
  ) {}

  /** Admitted with both sides' traces reserved, or 503 + Retry-After past the global budget of window work. */
  async compare(runId: string, baselineRunId: string): Promise<RunCompareAnswer> {
    const ticket = this.windows.admit('run compare', 2 * this.maxTraces);
    try {
      return await this.compareAdmitted(runId, baselineRunId, (bytes, always) => ticket.hold(bytes, always));
    } finally {
      ticket.release();
    }
  }

  private async compareAdmitted(
    runId: string,
    baselineRunId: string,
    hold: (bytes: number, always: boolean) => boolean
  ): Promise<RunCompareAnswer> {
    const t0 = performance.now();
    if (runId === baselineRunId)
      throw invalid(`run ${runId} compared with itself: give another run as the baseline (GET /api/runs lists them)`);
    const [run, base] = await Promise.all([this.runs.get(runId), this.runs.get(baselineRunId)]);
    if (!run) throw notFound(`unknown run ${runId}: the proxy has no run with this id (GET /api/runs lists them)`);
    if (!base)
      throw notFound(
        `unknown baseline run ${baselineRunId}: the proxy has no run with this id (GET /api/runs lists them)`
      );

    let runTr: RunTraces;
    let baseTr: RunTraces;
    try {
      [runTr, baseTr] = await Promise.all([
        this.finder.find(run, this.maxTraces),
        this.finder.find(base, this.maxTraces),
      ]);
    } catch (err) {
      if (err instanceof SourceError) throw upstream(`the runs' traces could not be read: ${err.message}`);
      throw err;
    }
    // Counted against the byte budget the other window answers see (the traces are read already: nothing to cut).
    for (const t of [...runTr.traces, ...baseTr.traces]) hold(traceBytes(t), true);
    const now = Date.now();
    const runSig = signatureOf(runTr.traces);
    const baseSig = signatureOf(baseTr.traces);
    const key = `${runId}\u0000${baselineRunId}`;
    const cacheable = settled(run, now) && settled(base, now);
    const hit = cacheable ? this.answers.get(key) : undefined;
    if (hit && hit.signature === `${runSig}|${baseSig}`) return { ...hit.answer, tookMs: performance.now() - t0 };

    const missing: string[] = [];
    for (const [r, tr, what] of [
      [run, runTr, 'run'],
      [base, baseTr, 'baseline run'],
    ] as const) {
      if (r.status === 'running') missing.push(`${what} ${r.runId} is still running: its traces so far`);
      if (!tr.traces.length) {
        missing.push(
          this.finder.source === 'embedded'
            ? `${what} ${r.runId}: no traces with hopscope.run_id=${r.runId} in the embedded store (evicted by its age or size bounds, or never sent: the chain's OTLP endpoint must be this proxy's /v1/traces)`
            : `${what} ${r.runId}: Tempo found no traces with span.hopscope.run_id="${r.runId}" between its start and end`
        );
      }
      missing.push(...tr.notes);
    }

    const runStats = runTr.traces.length ? this.stats(run, runSig, runTr, cacheable, false) : undefined;
    const baseline = baseTr.traces.length ? this.stats(base, baseSig, baseTr, cacheable, true) : undefined;
    const hops = hopDeltas(runStats, baseline);
    let candidates: Candidate[] = [];
    let criticalPath: RunCompareAnswer['criticalPath'] = [];
    if (runTr.traces.length) {
      const w = rankWindow({ traces: runTr.traces, baseline, config: this.rcaConfig });
      candidates = w.candidates.map((c) => withDeltaEvidence(c, hops, baselineRunId));
      criticalPath = w.criticalPath;
      missing.push(...w.missing);
    }
    const answer: RunCompareAnswer = {
      runId,
      baselineRunId,
      tookMs: performance.now() - t0,
      criticalPath,
      candidates,
      missing,
      hops,
      traces: {
        run: runTr.traces.length,
        baseline: baseTr.traces.length,
        source: this.finder.source,
        sampled: runTr.sampled || baseTr.sampled,
      },
      client: { run: clientFigures(run), baseline: clientFigures(base) },
    };
    if (cacheable) {
      this.answers.delete(key);
      this.answers.set(key, { signature: `${runSig}|${baseSig}`, answer });
      while (this.answers.size > CACHE_ENTRIES) this.answers.delete(this.answers.keys().next().value!);
    }
    return answer;
  }

  /** A run's per-operation statistics, or (asBaseline) the full baseline built from it; cached once the run is settled. */
  private stats(r: RunRecord, signature: string, tr: RunTraces, cacheable: boolean, asBaseline: boolean): Baseline {
    let e = this.perRun.get(r.runId);
    if (!e || e.signature !== signature) e = { signature };
    let out: Baseline;
    if (asBaseline) out = e.baseline ??= buildBaseline(tr.traces, this.rcaConfig);
    else
      out = e.stats ??= e.baseline ?? tr.stats?.() ?? buildBaseline(tr.traces, this.rcaConfig, { background: false });
    if (cacheable) {
      this.perRun.delete(r.runId);
      this.perRun.set(r.runId, e);
      while (this.perRun.size > CACHE_ENTRIES * 2) this.perRun.delete(this.perRun.keys().next().value!);
    }
    return out;
  }
}
