/**
 * The run's tally: every finished request counted once (outcomes, latencies, tokens, goodput against the SLOs,
 * quality, the ledger of kept requests), every send's lateness, and the summary built from them at the end.
 */
import type { Capacity } from '../../../contract/capacity';
import type { ClientSummary, LatencySketch, RequestOutcome, RunRequest } from '../../../contract/runs';
import { fallbackBucketS } from '../../../contract/fallback';
import { emptySketch, sketchAdd } from '../../../contract/sketch';
import { FallbackTally } from './fallback';
import { RequestLedger } from './ledger';
import type { PlannedRequest } from './mix';
import { rateAt, type Profile } from './profiles';
import type { Outcome } from './request';
import { Samples, tpot } from './stats';
import { StepTally } from './steps';
import type { Slo } from './thresholds';

/** A mergeable sketch of recorded values (the proxy merges a distributed run's workers with them). */
function sketchOf(values: readonly number[]): LatencySketch {
  const sk = emptySketch();
  for (const v of values) sketchAdd(sk, v);
  return sk;
}

export interface Progress {
  elapsedS: number;
  sent: number;
  completed: number;
  rps: number;
  p99Ms: number;
  errors: number;
  timeouts: number;
  degraded: number;
  inFlight: number;
  targetRps: number;
}

export interface LiveCounts {
  elapsedS: number;
  sent: number;
  completed: number;
  errors: number;
  inFlight: number;
  targetRps: number;
}

export interface RequestResult {
  outcome: RequestOutcome;
  latencyMs: number;
  ttftMs?: number;
  tpotMs?: number;
  itl: number[];
  tokens: number;
}

/** The client summary of the contract, plus what this worker knows beyond it. */
export interface Summary extends ClientSummary {
  runId: string;
  scenario?: string;
  target: string;
  profile: Profile;
  stream: boolean;
  goodput: ClientSummary['goodput'] & { slo: Slo };
  byModel: Record<string, { count: number; p50Ms: number | null; p99Ms: number | null; ttftP99Ms: number | null }>;
  traceIds: { sent: number; traceresponse: number; none: number; sampled: number };
  interrupted: number;
  slowest: RunRequest[];
  failed: RunRequest[];
  /** A sweep's/ramp's capacity (the session adds it: the client's analysis, then the proxy's). */
  capacity?: Capacity | null;
}

const n3 = (v: number): number | null => (Number.isFinite(v) ? Number(v.toFixed(3)) : null);

/** What the summary says about the run beyond its counts. */
export interface RunFacts {
  runId: string;
  scenario?: string;
  url: URL;
  profile: Profile;
  stream: boolean;
  traceparent: boolean;
  maxInFlight: number;
  /** The schedule's length in s (the profile's, or up to the interrupt). */
  durationS: number;
  /** From the start to the last answer, s. */
  wallS: number;
  /** The schedule's end, s from its start (a sweep stopped early ends before the profile). */
  scheduleEndS: number;
}

export class Tally {
  sent = 0;
  completed = 0;
  succeeded = 0;
  degraded = 0;
  timeouts = 0;
  errors = 0;
  inFlight = 0;
  dropped = 0;
  good = 0;
  outTokens = 0;
  lateOver = 0;
  interrupted = 0;
  answered = 0;
  private recallSum = 0;
  private recallN = 0;
  private agentDone = 0;
  private agentN = 0;
  private readonly e2e = new Samples();
  private readonly ttft = new Samples();
  private readonly itl = new Samples();
  private readonly tpots = new Samples();
  private readonly late = new Samples();
  private readonly errorsByKind: Record<string, number> = {};
  private readonly byModel = new Map<string, { e2e: Samples; ttft: Samples }>();
  private readonly ledger: RequestLedger;
  /** [finished at, e2e ms] of served requests, for the progress line's last-5-s p99. */
  private readonly recent: Array<[number, number]> = [];
  private lastCompleted = 0;
  /** The sweep's (ramp's, step profile's) per-step counts; undefined for the other profiles. */
  readonly steps: StepTally | undefined;
  /** Answers per model path (primary vs fall-back) and the fall-back share per time bucket. */
  readonly fallback: FallbackTally;
  /** performance.now() of the schedule's start (set by the driver as it starts). */
  startedAt = 0;

  constructor(
    private readonly slo: Slo,
    keepRequests: number,
    seed: number,
    profile: Profile,
    private readonly onResult?: (r: RequestResult) => void
  ) {
    this.ledger = new RequestLedger(keepRequests, seed);
    const steps = new StepTally(profile);
    this.steps = steps.size ? steps : undefined;
    this.fallback = new FallbackTally(fallbackBucketS(profile.durationS));
  }

  /** An arrival not sent: `maxInFlight` requests were already in flight. */
  drop(): void {
    this.dropped++;
  }

  /** A request leaves, `lateMs` after its `scheduled` instant (performance.now() time). */
  send(lateMs: number, scheduled: number): void {
    this.steps?.onSend((scheduled - this.startedAt) / 1000, lateMs);
    this.late.add(lateMs);
    if (lateMs > 10) this.lateOver++;
    this.sent++;
    this.inFlight++;
  }

  record(r: Outcome, p: PlannedRequest, startMs: number, at: number): void {
    this.inFlight--;
    if (r.answered) this.answered++;
    if (r.outcome === 'interrupted') {
      this.interrupted++;
      return;
    }
    this.completed++;
    this.fallback.record(r, startMs);
    const served = r.outcome === 'ok' || r.outcome === 'degraded';
    const t = served && r.ttftMs !== undefined ? tpot(r.latencyMs, r.ttftMs, r.tokens) : undefined;
    this.ledger.add(r.latencyMs, served, r.outcome !== 'ok', r.traceIdSource, r.sampled, () => ({
      traceId: r.traceId,
      traceIdSource: r.traceIdSource,
      traceSampled: r.traceId !== null && r.sampled,
      startMs: Math.round(startMs),
      e2eMs: Number(r.latencyMs.toFixed(3)),
      ttftMs: r.ttftMs !== undefined ? Number(r.ttftMs.toFixed(3)) : null,
      outcome: r.outcome as RequestOutcome,
      ...((r.detail ?? r.kind) ? { detail: r.detail ?? r.kind } : {}),
      model: p.model,
      route: p.route,
      ...(p.backend !== 'none' ? { backend: p.backend } : {}),
    }));
    this.onResult?.({
      outcome: r.outcome,
      latencyMs: r.latencyMs,
      ttftMs: r.ttftMs,
      tpotMs: t,
      itl: r.itl,
      tokens: r.tokens,
    });
    if (r.recall !== undefined) {
      this.recallSum += r.recall;
      this.recallN++;
    }
    if (r.agentTask) {
      this.agentN++;
      if (r.agentTask === 'completed') this.agentDone++;
    }
    const good = served && meetsSlo(this.slo, r, t);
    this.steps?.onDone(
      (startMs - performance.timeOrigin - this.startedAt) / 1000,
      (at - this.startedAt) / 1000,
      served,
      good,
      r.latencyMs
    );
    if (!served) {
      this.errors++;
      if (r.kind === 'timeout') this.timeouts++;
      this.errorsByKind[r.kind ?? 'error'] = (this.errorsByKind[r.kind ?? 'error'] ?? 0) + 1;
      return;
    }
    if (r.outcome === 'ok') this.succeeded++;
    else this.degraded++;
    this.e2e.add(r.latencyMs);
    this.recent.push([at, r.latencyMs]);
    this.outTokens += r.tokens;
    let m = this.byModel.get(r.key);
    if (!m) this.byModel.set(r.key, (m = { e2e: new Samples(), ttft: new Samples() }));
    m.e2e.add(r.latencyMs);
    if (r.ttftMs !== undefined) {
      this.ttft.add(r.ttftMs);
      m.ttft.add(r.ttftMs);
    }
    for (const g of r.itl) this.itl.add(g);
    if (t !== undefined) this.tpots.add(t);
    if (good) this.good++;
  }

  live(elapsedS: number, targetRps: number): LiveCounts {
    return {
      elapsedS,
      sent: this.sent,
      completed: this.completed,
      errors: this.errors,
      inFlight: this.inFlight,
      targetRps,
    };
  }

  /** The progress line's figures; called once a second (`rps` counts completions since the last call). */
  progress(now: number, elapsedS: number, targetRps: number): Progress {
    while (this.recent.length && this.recent[0][0] < now - 5000) this.recent.shift();
    const w = this.recent.map(([, v]) => v).sort((a, b) => a - b);
    const p: Progress = {
      elapsedS,
      sent: this.sent,
      completed: this.completed,
      rps: this.completed - this.lastCompleted,
      p99Ms: w.length ? w[Math.ceil(0.99 * w.length) - 1] : NaN,
      errors: this.errors,
      timeouts: this.timeouts,
      degraded: this.degraded,
      inFlight: this.inFlight,
      targetRps,
    };
    this.lastCompleted = this.completed;
    return p;
  }

  summary(f: RunFacts): Summary {
    const { sent, errorsByKind } = this;
    const notes: string[] = [];
    const refused = (errorsByKind.ECONNREFUSED ?? 0) + (errorsByKind.UND_ERR_CONNECT_TIMEOUT ?? 0);
    if (errorsByKind.ECONNREFUSED)
      notes.push(
        `the target refused ${errorsByKind.ECONNREFUSED} connection attempt(s) (ECONNREFUSED at ${f.url.origin}); counted as errors, the run continued`
      );
    if (refused === sent && sent > 0) notes.push('no request reached the target');
    if (this.dropped)
      notes.push(
        `${this.dropped} arrival(s) were not sent because ${f.maxInFlight} requests were already in flight (client-side limit)`
      );
    if (sent && this.lateOver / sent > 0.05)
      notes.push(
        `${((100 * this.lateOver) / sent).toFixed(1)}% of requests left more than 10 ms late: the driver could not keep the schedule (CPU-bound?)`
      );
    if (this.interrupted)
      notes.push(`${this.interrupted} request(s) were still in flight when the run was interrupted (not counted)`);
    if (this.degraded) notes.push(`${this.degraded} request(s) were served by a fallback model (degraded, not ok)`);
    if (this.answered && !this.ledger.traceIds.traceresponse && !f.traceparent) {
      notes.push(
        'no trace id from the server: it answers no traceresponse header (hopscope-load sends a traceparent unless --no-traceparent)'
      );
    } else if (this.ledger.traceIds.none) {
      notes.push(
        `${this.ledger.traceIds.none} request(s) have no trace id (no traceresponse from the server, none sent)`
      );
    }
    const fallback = this.fallback.result();
    let meanRate = 0;
    for (let t = 0; t < f.profile.durationS; t += f.profile.durationS / 200) meanRate += rateAt(f.profile, t) / 200;
    const byModelOut: Summary['byModel'] = {};
    for (const [k, v] of this.byModel)
      byModelOut[k] = {
        count: v.e2e.count,
        p50Ms: n3(v.e2e.pct(50)),
        p99Ms: n3(v.e2e.pct(99)),
        ttftP99Ms: n3(v.ttft.pct(99)),
      };
    const rate = (n: number, s: number): number => (s > 0 ? Number((n / s).toFixed(3)) : 0);
    const wall = f.wallS;
    const goodput: ClientSummary['goodput'] & { slo: Slo } = {
      slo: this.slo,
      good: this.good,
      rps: rate(this.good, wall),
      ratio: sent ? Number((this.good / sent).toFixed(4)) : 0,
    };
    return {
      runId: f.runId,
      ...(f.scenario ? { scenario: f.scenario } : {}),
      target: f.url.toString(),
      profile: f.profile,
      stream: f.stream,
      durationS: Number(wall.toFixed(3)),
      sent,
      completed: this.completed,
      succeeded: this.succeeded,
      degraded: this.degraded,
      errors: { total: this.errors, byKind: errorsByKind },
      timeouts: this.timeouts,
      droppedClientSide: this.dropped,
      rps: {
        targetMean: Number(meanRate.toFixed(3)),
        sent: rate(sent, f.durationS),
        completed: rate(this.succeeded + this.degraded, wall),
      },
      latencyMs: this.e2e.summary(),
      ttftMs: this.ttft.summary(),
      itlMs: this.itl.summary(),
      tpotMs: this.tpots.summary(),
      outputTokens: this.outTokens,
      outputTokensPerS: rate(this.outTokens, wall),
      goodput,
      schedule: {
        lateOver10ms: this.lateOver,
        lateRatio: sent ? Number((this.lateOver / sent).toFixed(4)) : 0,
        lateP99Ms: n3(this.late.pct(99)),
        lateMaxMs: n3(this.late.max()),
      },
      quality: {
        ragRecall: { mean: this.recallN ? Number((this.recallSum / this.recallN).toFixed(4)) : null, n: this.recallN },
        agentTaskCompletion: {
          rate: this.agentN ? Number((this.agentDone / this.agentN).toFixed(4)) : null,
          n: this.agentN,
        },
      },
      untraced: this.ledger.traceIds.none,
      sketches: { e2e: sketchOf(this.e2e.values()), ttft: sketchOf(this.ttft.values()) },
      ...(this.steps ? { steps: this.steps.result(performance.timeOrigin + this.startedAt, f.scheduleEndS) } : {}),
      // Only where the server says which model answered (the chain's answer info): otherwise there is no path to key.
      ...(fallback.paths.length ? { fallback } : {}),
      traceIds: { ...this.ledger.traceIds },
      interrupted: this.interrupted,
      byModel: byModelOut,
      slowest: this.ledger.slowest(),
      failed: this.ledger.failed(),
      notes,
    };
  }
}

/** Good for goodput: ok (a degraded answer is never good: it was not the model asked for) and within every SLO. */
export function meetsSlo(slo: Slo, r: Pick<Outcome, 'outcome' | 'latencyMs' | 'ttftMs'>, tpotMs?: number): boolean {
  return (
    r.outcome === 'ok' &&
    (slo.e2eMs === undefined || r.latencyMs <= slo.e2eMs) &&
    (slo.ttftMs === undefined || (r.ttftMs ?? r.latencyMs) <= slo.ttftMs) &&
    (slo.tpotMs === undefined || (tpotMs ?? 0) <= slo.tpotMs)
  );
}
