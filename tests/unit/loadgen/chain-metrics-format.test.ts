import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TraceFlags, trace } from '@opentelemetry/api';
import { Counter, Histogram } from 'prom-client';
import { observeWithExemplar, traceExemplar } from '../../../loadgen/src/telemetry/exemplars';
import {
  metricsText,
  podRegistry,
  renderMetrics,
  wantsOpenMetrics,
} from '../../../loadgen/src/telemetry/metrics-format';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const span = (flags: number) =>
  trace.wrapSpanContext({ traceId: TRACE, spanId: '00f067aa0ba902b7', traceFlags: flags });
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

function registry() {
  const r = podRegistry();
  new Counter({ name: 'hopscope_requests_total', help: 'Requests.', labelNames: ['code'], registers: [r] }).inc({
    code: '200',
  });
  new Counter({ name: 'tgi_request_count', help: 'TGI style, no _total.', registers: [r] }).inc(2);
  const h = new Histogram({
    name: 'hopscope_request_duration_seconds',
    help: 'Durations.',
    labelNames: ['route'],
    buckets: [0.1, 1],
    registers: [r],
    enableExemplars: true,
  });
  observeWithExemplar(h, { route: '/x' }, 0.05, traceExemplar(span(TraceFlags.SAMPLED)));
  return r;
}

describe('/metrics formats', () => {
  it('negotiates like prometheus_client: OpenMetrics only when the scrape asks for it', () => {
    assert.equal(wantsOpenMetrics(PROMETHEUS_ACCEPT), true);
    assert.equal(wantsOpenMetrics('text/plain;version=0.0.4'), false);
    assert.equal(wantsOpenMetrics(undefined), false);
  });

  it('OpenMetrics: counter families without _total, samples with it, exemplars on buckets, # EOF', async () => {
    const { contentType, body } = await renderMetrics(registry(), PROMETHEUS_ACCEPT, { openMetrics: true });
    assert.match(contentType, /^application\/openmetrics-text; version=1\.0\.0/);
    assert.match(body, /^# TYPE hopscope_requests counter$/m);
    assert.match(body, /^hopscope_requests_total\{code="200"\} 1$/m);
    assert.match(
      body,
      new RegExp(
        `^hopscope_request_duration_seconds_bucket\\{le="0.1",route="/x"\\} 1 # \\{trace_id="${TRACE}",span_id="00f067aa0ba902b7"\\} 0.05 \\d+(\\.\\d+)?$`,
        'm'
      )
    );
    assert.ok(body.endsWith('# EOF\n'));
  });

  it('the text format keeps every name as declared, has no exemplars, and is not changed by an OpenMetrics scrape before it', async () => {
    const r = registry();
    await metricsText(r, true);
    const { contentType, body } = await renderMetrics(r, 'text/plain', { openMetrics: true });
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    assert.match(body, /^hopscope_requests_total\{code="200"\} 1$/m);
    assert.match(body, /^# TYPE hopscope_requests_total counter$/m);
    assert.match(body, /^tgi_request_count 2$/m);
    assert.ok(!body.includes('# {') && !body.includes('# EOF'));
  });

  it('a text-only registry (TGI) answers text even to an OpenMetrics scrape: its counters keep their names', async () => {
    const { contentType, body } = await renderMetrics(registry(), PROMETHEUS_ACCEPT, { openMetrics: false });
    assert.match(contentType, /^text\/plain/);
    assert.match(body, /^tgi_request_count 2$/m);
    assert.ok(!/tgi_request_count_total/.test(body));
  });

  it('exemplars only for traces that are exported: sampled, or kept because they failed', () => {
    assert.deepEqual(traceExemplar(span(TraceFlags.SAMPLED)), { trace_id: TRACE, span_id: '00f067aa0ba902b7' });
    assert.equal(traceExemplar(span(TraceFlags.NONE)), undefined);
    assert.deepEqual(traceExemplar(span(TraceFlags.NONE), true)?.trace_id, TRACE);
    assert.equal(traceExemplar(undefined), undefined);
  });
});
