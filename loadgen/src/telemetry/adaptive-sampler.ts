/**
 * Adaptive head sampler, usable by any Node service with the OpenTelemetry JS SDK.
 *
 * - Keeps `baseRate` of new traces while traffic is calm.
 * - QPS jump: when the last 2 s run ≥ `jumpRatio` (1.3) × the quietest 2 s of the last `windowS` (10 s), the rate drops
 *   to `baseRate × baseline / current`, so the volume of kept traces stays about what it was before the jump.
 * - P99 knee: when the P99 of recent root latencies (fed through `observeLatency`) is above `p99KneeMs`, the rate halves
 *   once per second while it stays there.
 * - Never below `minRate` (1% by default). After `calmS` seconds with neither signal it doubles per `calmS` back to `baseRate`.
 * - Decisions are a pure function of the trace id and the current rate (like TraceIdRatioBased), so every process that
 *   makes the same decision for a trace agrees.
 * - Dropped root traces are RECORDED but not sampled (SamplingDecision.RECORD): `KeepErrorsSpanProcessor` exports them
 *   anyway when they end in an error or a timeout, which is how errors and timeouts are always kept (see that file).
 * Use `parentBasedAdaptive()` to get the parent-based sampler: a trace is kept or dropped whole.
 */
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';
import { ParentBasedSampler, SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-base';
import { Gauge, type Registry } from 'prom-client';

export interface AdaptiveSamplerOptions {
  baseRate?: number;
  minRate?: number;
  jumpRatio?: number;
  windowS?: number;
  p99KneeMs?: number;
  calmS?: number;
  /** Traffic below this many requests/s never counts as a jump (1 → 2 req/s is not a surge). */
  minJumpQps?: number;
  /** false pins the rate at baseRate (a plain ratio sampler with the same error keeping); default true. */
  adaptive?: boolean;
  /** Injectable clock (ms), for tests on synthetic curves. */
  now?: () => number;
  /** When given, `hopscope_sampler_rate` is registered there (with a `service` label when `service` is set; leave it
   *  unset when Prometheus adds the service as a target label). */
  registry?: Registry;
  service?: string;
}

const SECOND = 1000;

export class AdaptiveSampler implements Sampler {
  readonly baseRate: number;
  readonly minRate: number;
  private readonly jumpRatio: number;
  private readonly windowS: number;
  private readonly kneeMs: number;
  private readonly calmS: number;
  private readonly minJumpQps: number;
  private readonly adaptive: boolean;
  private readonly now: () => number;
  private rate: number;
  /** Arrivals per whole second, keyed by epoch second (only the last windowS+2 kept). */
  private readonly arrivals = new Map<number, number>();
  /** Recent root latencies: [timeMs, latencyMs]; bounded. */
  private latencies: Array<[number, number]> = [];
  private lastUpdate = -Infinity;
  private lastKneeCut = -Infinity;
  private calmSince: number;
  private readonly startSecond: number;
  private lastReason = 'calm';

  constructor(opts: AdaptiveSamplerOptions = {}) {
    this.baseRate = opts.baseRate ?? 1;
    this.minRate = opts.minRate ?? 0.01;
    if (!(this.minRate > 0 && this.minRate <= this.baseRate && this.baseRate <= 1)) {
      throw new Error(`AdaptiveSampler: need 0 < minRate (${this.minRate}) ≤ baseRate (${this.baseRate}) ≤ 1`);
    }
    this.jumpRatio = opts.jumpRatio ?? 1.3;
    this.windowS = opts.windowS ?? 10;
    this.kneeMs = opts.p99KneeMs ?? Infinity;
    this.calmS = opts.calmS ?? 5;
    this.minJumpQps = opts.minJumpQps ?? 2;
    this.adaptive = opts.adaptive ?? true;
    this.now = opts.now ?? Date.now;
    this.rate = this.baseRate;
    this.calmSince = this.now();
    this.startSecond = Math.floor(this.now() / SECOND);
    if (opts.registry) {
      const self = this;
      const service = opts.service;
      new Gauge({
        name: 'hopscope_sampler_rate',
        help: 'Current head-sampling rate of the adaptive sampler (0..1).',
        labelNames: service ? ['service'] : [],
        registers: [opts.registry],
        collect() {
          self.update(self.now());
          if (service) this.set({ service }, self.rate);
          else this.set(self.rate);
        },
      });
    }
  }

  /** The current rate (updating the state first). */
  currentRate(): number {
    this.update(this.now());
    return this.rate;
  }

  /** Why the rate is what it is: `calm`, `qps_jump`, `p99_knee` or `recovering`. */
  reason(): string {
    return this.lastReason;
  }

  /** Feed the latency of a finished root request (ms). */
  observeLatency(ms: number, at = this.now()): void {
    this.latencies.push([at, ms]);
    if (this.latencies.length > 20_000) this.latencies = this.latencies.slice(-10_000);
  }

  /** Count one arrival without deciding (for callers that sample elsewhere). */
  recordArrival(at = this.now()): void {
    const s = Math.floor(at / SECOND);
    this.arrivals.set(s, (this.arrivals.get(s) ?? 0) + 1);
  }

  shouldSample(
    _ctx: Context,
    traceId: string,
    _name?: string,
    _kind?: SpanKind,
    _attrs?: Attributes,
    _links?: Link[]
  ): SamplingResult {
    const t = this.now();
    this.recordArrival(t);
    this.update(t);
    const keep = traceIdFraction(traceId) < this.rate;
    return {
      decision: keep ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.RECORD,
      attributes: keep ? { 'hopscope.sampler.rate': this.rate } : undefined,
    };
  }

  toString(): string {
    return `AdaptiveSampler{rate=${this.rate.toFixed(4)}, base=${this.baseRate}, min=${this.minRate}}`;
  }

  /** Requests/s over the 2 whole seconds ending at second `s` (exclusive of the second in progress). */
  private qpsAt(s: number): number {
    return ((this.arrivals.get(s - 1) ?? 0) + (this.arrivals.get(s - 2) ?? 0)) / 2;
  }

  private p99(since: number): number {
    const xs = this.latencies.filter(([t]) => t >= since).map(([, v]) => v);
    if (xs.length < 5) return 0;
    xs.sort((a, b) => a - b);
    return xs[Math.min(xs.length - 1, Math.ceil(0.99 * xs.length) - 1)];
  }

  private update(t: number): void {
    if (!this.adaptive || t - this.lastUpdate < 250) return;
    this.lastUpdate = t;
    const s = Math.floor(t / SECOND);
    for (const k of this.arrivals.keys()) if (k < s - this.windowS - 3) this.arrivals.delete(k);
    const windowStart = t - this.windowS * SECOND;
    if (this.latencies.length && this.latencies[0][0] < windowStart)
      this.latencies = this.latencies.filter(([at]) => at >= windowStart);

    const current = this.qpsAt(s);
    let baseline = Infinity;
    // Only 2-second windows that lie entirely after the sampler started count (no false jump at start-up).
    for (let k = Math.max(s - this.windowS, this.startSecond + 2); k <= s - 2; k++)
      baseline = Math.min(baseline, this.qpsAt(k));
    const jump =
      current >= this.minJumpQps && Number.isFinite(baseline) && current >= this.jumpRatio * Math.max(baseline, 0.5);
    // Latency: judge the recent past (a third of the window), so recovery is not held back by old slow requests.
    const overKnee = this.p99(t - (this.windowS * SECOND) / 3) > this.kneeMs;

    if (jump) {
      const target = (this.baseRate * Math.max(baseline, 0.5)) / current;
      this.rate = Math.max(this.minRate, Math.min(this.rate, target));
      this.lastReason = 'qps_jump';
      this.calmSince = t;
    }
    if (overKnee) {
      if (t - this.lastKneeCut >= SECOND) {
        this.rate = Math.max(this.minRate, this.rate / 2);
        this.lastKneeCut = t;
      }
      this.lastReason = 'p99_knee';
      this.calmSince = t;
    }
    if (!jump && !overKnee && this.rate < this.baseRate && t - this.calmSince >= this.calmS * SECOND) {
      this.rate = Math.min(this.baseRate, this.rate * 2);
      this.calmSince = t;
      this.lastReason = this.rate >= this.baseRate ? 'calm' : 'recovering';
    } else if (!jump && !overKnee && this.rate >= this.baseRate) {
      this.lastReason = 'calm';
    }
  }
}

/** Fraction in [0, 1) from the low 8 hex digits of a trace id (random part in W3C ids). */
export function traceIdFraction(traceId: string): number {
  const v = parseInt(traceId.slice(-8), 16);
  return Number.isFinite(v) ? v / 0x1_0000_0000 : 0;
}

/** Records but does not sample: children of a dropped trace stay dropped, but errors can still be exported. */
export class RecordOnlySampler implements Sampler {
  shouldSample(): SamplingResult {
    return { decision: SamplingDecision.RECORD };
  }
  toString(): string {
    return 'RecordOnlySampler';
  }
}

/** Parent-based around the adaptive root sampler: a remote or local parent's decision is followed, so traces are whole. */
export function parentBasedAdaptive(root: AdaptiveSampler): Sampler {
  return new ParentBasedSampler({
    root,
    remoteParentNotSampled: new RecordOnlySampler(),
    localParentNotSampled: new RecordOnlySampler(),
  });
}
