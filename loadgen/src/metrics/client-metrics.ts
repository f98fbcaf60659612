/**
 * The client's own measurements as OpenTelemetry metrics, labelled `run_id` and `scenario`, read by a standard reader
 * (`readers.ts`): OTLP/HTTP to a Collector, or a Prometheus scrape target. Prometheus names (as both the OTel
 * Prometheus exporter and the Collector write them):
 *   hopscope_load_requests_total{outcome}              finished requests: ok | degraded | error | timeout
 *   hopscope_load_requests_sent_total                  requests sent
 *   hopscope_load_output_tokens_total
 *   hopscope_load_e2e_request_latency_seconds          histogram, served requests
 *   hopscope_load_time_to_first_token_seconds          histogram
 *   hopscope_load_inter_token_latency_seconds          histogram
 *   hopscope_load_time_per_output_token_seconds        histogram
 *   hopscope_load_target_requests_per_second           gauge: the profile's rate now
 *   hopscope_load_achieved_requests_per_second         gauge: requests finished per second since the last reading
 *   hopscope_load_in_flight_requests                   gauge
 * Workers of one distributed run differ by instance (`service.instance.id`), so `sum by (run_id)` adds them up.
 *
 * Why the per-request figures are not SDK instruments: a synchronous record costs ~2.5 µs (attribute hashing,
 * context, clock), and a streamed request records ~6 values — 12% of the driver's CPU at 2,000 req/s
 * (bench/loadgen-metrics.bench.ts). They are counted here in plain arrays (tens of ns each) and handed to the SDK's
 * readers as cumulative data by a MetricProducer, the SDK's interface for exactly that; the gauges are SDK
 * observable instruments, read at each collection.
 */
import { ValueType, type Attributes, type HrTime, type Meter } from '@opentelemetry/api';
import { hrTime } from '@opentelemetry/core';
import { emptyResource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type CollectionResult,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { RequestOutcome } from '../../../contract/runs';
import type { LiveCounts, RequestResult } from '../load/driver';

const LATENCY_BUCKETS_S = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120,
];
const TOKEN_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1,
  2.5,
];
const OUTCOMES: RequestOutcome[] = ['ok', 'degraded', 'error', 'timeout'];
export const SCOPE = { name: 'hopscope-load', version: '0.1.0' };

/** A cumulative explicit-bucket histogram of values in seconds (inclusive upper bounds, as OTel defines them). */
class SecondsHistogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;
  constructor(
    readonly name: string,
    readonly description: string,
    readonly boundaries: number[]
  ) {
    this.counts = new Float64Array(boundaries.length + 1);
  }
  record(seconds: number): void {
    const b = this.boundaries;
    let lo = 0,
      hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seconds <= b[mid]) hi = mid;
      else lo = mid + 1;
    }
    this.counts[lo]++;
    this.sum += seconds;
    this.count++;
    if (seconds < this.min) this.min = seconds;
    if (seconds > this.max) this.max = seconds;
  }
}

export class ClientInstruments implements MetricProducer {
  private readonly attrs: Attributes;
  private readonly byOutcome: Record<RequestOutcome, number> = { ok: 0, degraded: 0, error: 0, timeout: 0 };
  private tokens = 0;
  private readonly e2e = new SecondsHistogram(
    'hopscope_load_e2e_request_latency_seconds',
    'End-to-end latency of served requests, as the client saw it.',
    LATENCY_BUCKETS_S
  );
  private readonly ttft = new SecondsHistogram(
    'hopscope_load_time_to_first_token_seconds',
    'Time to first token, as the client saw it (streaming).',
    LATENCY_BUCKETS_S
  );
  private readonly itl = new SecondsHistogram(
    'hopscope_load_inter_token_latency_seconds',
    'Time between two content chunks of a stream, as the client saw it.',
    TOKEN_BUCKETS_S
  );
  private readonly tpot = new SecondsHistogram(
    'hopscope_load_time_per_output_token_seconds',
    'Time per output token: (latency − TTFT) / (tokens − 1).',
    TOKEN_BUCKETS_S
  );
  private readonly startTime: HrTime = hrTime();
  private live: () => LiveCounts = () => ({ elapsedS: 0, sent: 0, completed: 0, errors: 0, inFlight: 0, targetRps: 0 });
  /** performance.now() of the last recorded value. */
  lastUpdate = 0;

  /** Register this as a reader's metric producer, then give it the provider's meter for the gauges (`observe`). */
  constructor(labels: { runId: string; scenario: string }) {
    this.attrs = { run_id: labels.runId, scenario: labels.scenario };
  }

  observe(meter: Meter): void {
    meter
      .createObservableCounter('hopscope_load_requests_sent', {
        description: 'Requests the load generator sent.',
        unit: '{request}',
      })
      .addCallback((r) => r.observe(this.live().sent, this.attrs));
    meter
      .createObservableGauge('hopscope_load_target_requests_per_second', {
        description: "The load profile's target rate now.",
      })
      .addCallback((r) => r.observe(this.live().targetRps, this.attrs));
    meter
      .createObservableGauge('hopscope_load_in_flight_requests', { description: 'Requests sent and not finished yet.' })
      .addCallback((r) => r.observe(this.live().inFlight, this.attrs));
    let prev = { at: performance.now(), completed: 0 };
    meter
      .createObservableGauge('hopscope_load_achieved_requests_per_second', {
        description: 'Requests finished per second since the previous reading.',
      })
      .addCallback((r) => {
        const now = { at: performance.now(), completed: this.live().completed };
        const dt = (now.at - prev.at) / 1000;
        if (dt > 0.05) {
          r.observe((now.completed - prev.completed) / dt, this.attrs);
          prev = now;
        }
      });
  }

  /** The driver's live counts, read at each collection. */
  attach(live: () => LiveCounts): void {
    this.live = live;
  }

  record(r: RequestResult): void {
    this.byOutcome[r.outcome]++;
    this.lastUpdate = performance.now();
    if (r.outcome !== 'ok' && r.outcome !== 'degraded') return;
    this.e2e.record(r.latencyMs / 1000);
    if (r.ttftMs !== undefined) this.ttft.record(r.ttftMs / 1000);
    if (r.tpotMs !== undefined) this.tpot.record(r.tpotMs / 1000);
    for (const g of r.itl) this.itl.record(g / 1000);
    this.tokens += r.tokens;
  }

  /** MetricProducer: the cumulative figures so far, in the SDK's data model (the reader adds the resource). */
  async collect(): Promise<CollectionResult> {
    const endTime = hrTime();
    const point = <T>(value: T, attributes: Attributes = this.attrs) => ({
      startTime: this.startTime,
      endTime,
      attributes,
      value,
    });
    const sum = (
      name: string,
      description: string,
      unit: string,
      points: ReturnType<typeof point<number>>[]
    ): MetricData => ({
      descriptor: { name, description, unit, valueType: ValueType.INT },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: points,
    });
    const hist = (h: SecondsHistogram): MetricData => ({
      descriptor: { name: h.name, description: h.description, unit: 's', valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [
        point({
          buckets: { boundaries: h.boundaries, counts: [...h.counts] },
          sum: h.sum,
          count: h.count,
          ...(h.count ? { min: h.min, max: h.max } : {}),
        }),
      ],
    });
    const metrics: MetricData[] = [
      sum(
        'hopscope_load_requests',
        'Requests the load generator finished, by outcome (ok, degraded, error, timeout).',
        '{request}',
        OUTCOMES.filter((o) => this.byOutcome[o] > 0).map((o) =>
          point(this.byOutcome[o], { ...this.attrs, outcome: o })
        )
      ),
      sum('hopscope_load_output_tokens', 'Output tokens received.', '{token}', [point(this.tokens)]),
      hist(this.e2e),
      hist(this.ttft),
      hist(this.itl),
      hist(this.tpot),
    ];
    return {
      resourceMetrics: {
        resource: emptyResource(),
        scopeMetrics: [{ scope: SCOPE, metrics: metrics.filter((m) => m.dataPoints.length) }],
      },
      errors: [],
    };
  }
}
