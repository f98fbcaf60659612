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
 */
import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { RequestOutcome } from '../../../contract/runs';
import type { LiveCounts, RequestResult } from '../load/driver';

const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120];
const TOKEN_BUCKETS_S = [0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2.5];

export class ClientInstruments {
  private readonly requests: Counter;
  private readonly tokens: Counter;
  private readonly e2e: Histogram;
  private readonly ttft: Histogram;
  private readonly itl: Histogram;
  private readonly tpot: Histogram;
  private readonly attrs: Attributes;
  // One attribute object per outcome, made once: the SDK hashes what it is given on every call.
  private readonly byOutcome: Record<RequestOutcome, Attributes>;
  private live: () => LiveCounts = () => ({ elapsedS: 0, sent: 0, completed: 0, errors: 0, inFlight: 0, targetRps: 0 });
  /** performance.now() of the last recorded value. */
  lastUpdate = 0;

  constructor(meter: Meter, labels: { runId: string; scenario: string }) {
    this.attrs = { run_id: labels.runId, scenario: labels.scenario };
    this.byOutcome = { ok: { ...this.attrs, outcome: 'ok' }, degraded: { ...this.attrs, outcome: 'degraded' }, error: { ...this.attrs, outcome: 'error' }, timeout: { ...this.attrs, outcome: 'timeout' } };
    this.requests = meter.createCounter('hopscope_load_requests', { description: 'Requests the load generator finished, by outcome (ok, degraded, error, timeout).', unit: '{request}' });
    meter.createObservableCounter('hopscope_load_requests_sent', { description: 'Requests the load generator sent.', unit: '{request}' })
      .addCallback((r) => r.observe(this.live().sent, this.attrs));
    this.tokens = meter.createCounter('hopscope_load_output_tokens', { description: 'Output tokens received.', unit: '{token}' });
    const hist = (name: string, description: string, buckets: number[]): Histogram => meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: buckets } });
    this.e2e = hist('hopscope_load_e2e_request_latency_seconds', 'End-to-end latency of served requests, as the client saw it.', LATENCY_BUCKETS_S);
    this.ttft = hist('hopscope_load_time_to_first_token_seconds', 'Time to first token, as the client saw it (streaming).', LATENCY_BUCKETS_S);
    this.itl = hist('hopscope_load_inter_token_latency_seconds', 'Time between two content chunks of a stream, as the client saw it.', TOKEN_BUCKETS_S);
    this.tpot = hist('hopscope_load_time_per_output_token_seconds', 'Time per output token: (latency − TTFT) / (tokens − 1).', TOKEN_BUCKETS_S);
    meter.createObservableGauge('hopscope_load_target_requests_per_second', { description: 'The load profile\'s target rate now.' })
      .addCallback((r) => r.observe(this.live().targetRps, this.attrs));
    meter.createObservableGauge('hopscope_load_in_flight_requests', { description: 'Requests sent and not finished yet.' })
      .addCallback((r) => r.observe(this.live().inFlight, this.attrs));
    let prev = { at: performance.now(), completed: 0 };
    meter.createObservableGauge('hopscope_load_achieved_requests_per_second', { description: 'Requests finished per second since the previous reading.' })
      .addCallback((r) => {
        const now = { at: performance.now(), completed: this.live().completed };
        const dt = (now.at - prev.at) / 1000;
        if (dt > 0.05) { r.observe((now.completed - prev.completed) / dt, this.attrs); prev = now; }
      });
  }

  /** The driver's live counts, read at each collection. */
  attach(live: () => LiveCounts): void {
    this.live = live;
  }

  record(r: RequestResult): void {
    this.requests.add(1, this.byOutcome[r.outcome]);
    this.lastUpdate = performance.now();
    if (r.outcome !== 'ok' && r.outcome !== 'degraded') return;
    this.e2e.record(r.latencyMs / 1000, this.attrs);
    if (r.ttftMs !== undefined) this.ttft.record(r.ttftMs / 1000, this.attrs);
    if (r.tpotMs !== undefined) this.tpot.record(r.tpotMs / 1000, this.attrs);
    for (const g of r.itl) this.itl.record(g / 1000, this.attrs);
    if (r.tokens) this.tokens.add(r.tokens, this.attrs);
  }
}
