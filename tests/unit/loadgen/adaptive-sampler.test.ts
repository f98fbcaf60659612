import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SamplingDecision,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { AdaptiveSampler, parentBasedAdaptive, traceIdFraction } from '../../../loadgen/src/telemetry/adaptive-sampler';
import { KeepErrorsSpanProcessor } from '../../../loadgen/src/telemetry/keep-errors-processor';

/** Drives a sampler with a synthetic QPS curve (requests/s per second) and optional latencies, on a fake clock. */
function drive(
  s: AdaptiveSampler,
  clock: { t: number },
  seconds: number,
  qps: (sec: number) => number,
  latencyMs?: (sec: number) => number,
  from = 0
): number[] {
  const rates: number[] = [];
  for (let sec = from; sec < from + seconds; sec++) {
    const n = Math.round(qps(sec));
    for (let i = 0; i < n; i++) {
      clock.t = sec * 1000 + (i * 1000) / Math.max(1, n);
      s.shouldSample(ROOT_CONTEXT, randomTraceId(), 'req');
      if (latencyMs) s.observeLatency(latencyMs(sec), clock.t);
    }
    clock.t = (sec + 1) * 1000 - 1;
    rates.push(s.currentRate());
  }
  return rates;
}

let counter = 1;
function randomTraceId(): string {
  // Spread evenly over the id space so the kept share tracks the rate.
  counter = (counter * 1103515245 + 12345) >>> 0;
  return `${'0'.repeat(24)}${counter.toString(16).padStart(8, '0')}`;
}

describe('adaptive sampler on synthetic curves', () => {
  it('keeps the base rate under steady traffic below the knee', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 1, minRate: 0.01, p99KneeMs: 500, now: () => clock.t });
    const rates = drive(
      s,
      clock,
      30,
      () => 100,
      () => 80
    );
    assert.ok(
      rates.every((r) => r === 1),
      `rates ${rates}`
    );
    assert.equal(s.reason(), 'calm');
  });

  it('drops when QPS jumps ≥ 30% within 10 s, roughly keeping the sampled volume', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 1, minRate: 0.01, now: () => clock.t });
    drive(s, clock, 20, () => 100);
    const rates = drive(s, clock, 4, () => 400, undefined, 20);
    const r = rates[rates.length - 1];
    assert.ok(r <= 0.3 && r >= 0.2, `rate after a 4× jump: ${r}`);
    assert.equal(s.reason(), 'qps_jump');
  });

  it('does not react to a rise under 30%', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 1, now: () => clock.t });
    drive(s, clock, 20, () => 100);
    const rates = drive(s, clock, 10, () => 120, undefined, 20);
    assert.ok(
      rates.every((r) => r === 1),
      `rates ${rates}`
    );
  });

  it('halves while P99 is above the knee, never below the floor', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 1, minRate: 0.01, p99KneeMs: 500, now: () => clock.t });
    drive(
      s,
      clock,
      10,
      () => 50,
      () => 100
    );
    const rates = drive(
      s,
      clock,
      30,
      () => 50,
      () => 2000,
      10
    );
    assert.ok(rates[2] < 0.5, `rate should fall within 3 s above the knee: ${rates.slice(0, 4)}`);
    assert.ok(
      rates.every((r, i) => i === 0 || r <= rates[i - 1]),
      'monotonic decrease while over the knee'
    );
    assert.equal(Math.min(...rates), 0.01, 'floor is 1%');
    assert.equal(s.reason(), 'p99_knee');
  });

  it('recovers to the base rate once calm', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 0.5, minRate: 0.01, p99KneeMs: 500, calmS: 5, now: () => clock.t });
    drive(
      s,
      clock,
      10,
      () => 50,
      () => 100
    );
    drive(
      s,
      clock,
      20,
      () => 50,
      () => 3000,
      10
    );
    assert.equal(s.currentRate(), 0.01);
    const rates = drive(
      s,
      clock,
      60,
      () => 50,
      () => 100,
      30
    );
    assert.equal(rates[rates.length - 1], 0.5, `rates ${rates.join(',')}`);
    assert.ok(rates[5] < 0.5, 'recovery is gradual, not instant');
  });

  it('keeps about `rate` of traces, decided by trace id (same id → same decision)', () => {
    const clock = { t: 0 };
    const s = new AdaptiveSampler({ baseRate: 0.25, minRate: 0.01, now: () => clock.t });
    let kept = 0;
    const n = 4000;
    for (let i = 0; i < n; i++) {
      clock.t = i; // 1000 req/s, steady
      const id = randomTraceId();
      const d = s.shouldSample(ROOT_CONTEXT, id, 'x').decision;
      if (d === SamplingDecision.RECORD_AND_SAMPLED) kept++;
      assert.equal(d === SamplingDecision.RECORD_AND_SAMPLED, traceIdFraction(id) < s.currentRate());
    }
    assert.ok(Math.abs(kept / n - 0.25) < 0.04, `kept ${kept / n}`);
  });

  it('exports its current rate as hopscope_sampler_rate', async () => {
    const clock = { t: 0 };
    const registry = new Registry();
    const s = new AdaptiveSampler({ baseRate: 0.5, now: () => clock.t, registry, service: 'rag' });
    const text = await registry.metrics();
    assert.match(text, /hopscope_sampler_rate\{service="rag"\} 0\.5/);
    void s;
  });

  it('rejects a floor above the base rate', () => {
    assert.throws(() => new AdaptiveSampler({ baseRate: 0.1, minRate: 0.5 }), /minRate/);
  });
});

describe('parent-based wrapper and error keeping', () => {
  it('children follow the parent decision; dropped traces are recorded, not sampled', () => {
    const clock = { t: 0 };
    const sampler = parentBasedAdaptive(new AdaptiveSampler({ baseRate: 0.01, minRate: 0.01, now: () => clock.t }));
    const sampledParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const droppedParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'a'.repeat(31) + '0',
      spanId: 'b'.repeat(16),
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    assert.equal(
      sampler.shouldSample(sampledParent, 'a'.repeat(32), 'x', SpanKind.SERVER, {}, []).decision,
      SamplingDecision.RECORD_AND_SAMPLED
    );
    assert.equal(
      sampler.shouldSample(droppedParent, 'a'.repeat(31) + '0', 'x', SpanKind.SERVER, {}, []).decision,
      SamplingDecision.RECORD
    );
  });

  it('exports every span of a dropped trace once one of its spans errors (errors and timeouts are always kept)', async () => {
    const exporter = new InMemorySpanExporter();
    const clock = { t: 0 };
    const sampler = parentBasedAdaptive(new AdaptiveSampler({ baseRate: 0.01, minRate: 0.01, now: () => clock.t }));
    // Ids whose low 32 bits are high → above 1% → dropped by the head sampler.
    const ids = { next: 0 };
    const provider = new BasicTracerProvider({
      sampler,
      idGenerator: {
        generateTraceId: () => `${'0'.repeat(24)}ffff${(0xf000 + ids.next++).toString(16)}`,
        generateSpanId: () =>
          Math.floor(Math.random() * 2 ** 48)
            .toString(16)
            .padStart(16, '0'),
      },
      spanProcessors: [new KeepErrorsSpanProcessor(new SimpleSpanProcessor(exporter))],
    });
    const tracer = provider.getTracer('t');
    // A healthy dropped trace: nothing exported.
    const ok = tracer.startSpan('ok-root');
    tracer.startSpan('ok-child', {}, trace.setSpan(ROOT_CONTEXT, ok)).end();
    ok.end();
    assert.equal(exporter.getFinishedSpans().length, 0);
    // A dropped trace whose child times out: child, sibling and root are all exported.
    const root = tracer.startSpan('root');
    const rctx = trace.setSpan(ROOT_CONTEXT, root);
    tracer.startSpan('sibling-ok', {}, rctx).end();
    const child = tracer.startSpan('child', {}, rctx);
    child.setAttribute('error.type', 'timeout');
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
    child.end();
    root.end();
    const names = exporter
      .getFinishedSpans()
      .map((s) => s.name)
      .sort();
    assert.deepEqual(names, ['child', 'root', 'sibling-ok']);
    assert.ok(exporter.getFinishedSpans().every((s) => s.spanContext().traceFlags & TraceFlags.SAMPLED));
    await provider.shutdown();
  });

  it("honours a sampled parent (hopscope-load's traceparent) even when a QPS jump has cut its own rate", () => {
    const clock = { t: 0 };
    const root = new AdaptiveSampler({ baseRate: 1, minRate: 0.01, now: () => clock.t });
    // 2 req/s for 10 s, then 40 req/s: the rate drops to about 2/40.
    const rates = drive(root, clock, 14, (sec) => (sec < 10 ? 2 : 40));
    assert.ok(rates[rates.length - 1] < 0.1, `rate after the jump ${rates[rates.length - 1]}`);
    const sampler = parentBasedAdaptive(root);
    // A trace id its own rate would drop (fraction ≈ 0.94).
    const id = `${'0'.repeat(24)}f0000000`;
    assert.equal(root.shouldSample(ROOT_CONTEXT, id).decision, SamplingDecision.RECORD);
    const parent = (flags: TraceFlags) =>
      trace.setSpanContext(ROOT_CONTEXT, { traceId: id, spanId: 'c'.repeat(16), traceFlags: flags, isRemote: true });
    assert.equal(
      sampler.shouldSample(parent(TraceFlags.SAMPLED), id, 'POST /v1/chat/completions', SpanKind.SERVER, {}, [])
        .decision,
      SamplingDecision.RECORD_AND_SAMPLED
    );
    // An unsampled parent (--trace-sample below 1): recorded only, so errors and the slow tail can still be kept.
    assert.equal(
      sampler.shouldSample(parent(TraceFlags.NONE), id, 'POST /v1/chat/completions', SpanKind.SERVER, {}, []).decision,
      SamplingDecision.RECORD
    );
  });

  it("keeps a dropped trace whose span is over its operation's P99 (the slow tail), not one under it", async () => {
    const exporter = new InMemorySpanExporter();
    const ids = { next: 0 };
    const provider = new BasicTracerProvider({
      sampler: parentBasedAdaptive(new AdaptiveSampler({ baseRate: 0.01, minRate: 0.01, now: () => 0 })),
      idGenerator: {
        generateTraceId: () => `${'0'.repeat(24)}fffe${(0x1000 + ids.next++).toString(16).padStart(4, '0')}`,
        generateSpanId: () => (0x1000 + ids.next++).toString(16).padStart(16, '0'),
      },
      spanProcessors: [new KeepErrorsSpanProcessor(new SimpleSpanProcessor(exporter))],
    });
    const tracer = provider.getTracer('t');
    /** One dropped trace: a root `tail-root` and its child `tail-op` lasting `ms` (explicit times, no clock). */
    const request = (ms: number, at: number) => {
      const root = tracer.startSpan('tail-root', { startTime: at });
      tracer.startSpan('tail-op', { startTime: at }, trace.setSpan(ROOT_CONTEXT, root)).end(at + ms);
      root.end(at + ms + 1);
    };
    // 300 requests of 10–14.9 ms, each duration twice per hundred: the P99 of both operations is their maximum
    // (14.9 ms and 15.9 ms), so none is over it and none is exported.
    for (let i = 0; i < 300; i++) request(10 + (i % 50) / 10, i * 100);
    assert.equal(exporter.getFinishedSpans().length, 0);
    // A request at the P99's level is not the tail; one of 80 ms is, and its whole trace is exported.
    request(14.9, 40_000);
    assert.equal(exporter.getFinishedSpans().length, 0);
    request(80, 50_000);
    const kept = exporter.getFinishedSpans();
    assert.deepEqual(kept.map((s) => s.name).sort(), ['tail-op', 'tail-root']);
    assert.equal(new Set(kept.map((s) => s.spanContext().traceId)).size, 1);
    assert.ok(kept.every((s) => s.spanContext().traceFlags & TraceFlags.SAMPLED));
    await provider.shutdown();
  });
});
