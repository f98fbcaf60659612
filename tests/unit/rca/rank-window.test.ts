import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type KernelEvent, RcaAnswer, type Span } from '../../../contract';
import { buildBaseline, rankWindow } from '../../../backend-proxy/src/rca';
import { syntheticHealthy, syntheticTrace } from '../../support/rca/synthetic';

function incident(
  hop: 'rag' | 'tool' | 'embedding',
  kind: 'latency' | 'tcp_retransmit' | 'error',
  faulty: number,
  healthy: number
) {
  const traces: Span[][] = [];
  const events: KernelEvent[] = [];
  for (let i = 0; i < faulty + healthy; i++) {
    const tr = syntheticTrace({ seed: 5000 + i, fault: i < faulty ? { hop, kind } : undefined });
    traces.push(tr.spans);
    events.push(...tr.kernelEvents);
  }
  return { traces, events };
}
const baselineTraces = syntheticHealthy(9, 80);
const baseline = buildBaseline(baselineTraces);

test('window: the hop faulted in a third of the traces ranks first, with how many traces show it', () => {
  const { traces, events } = incident('rag', 'latency', 10, 20);
  const a = rankWindow({ traces, baseline, kernelEvents: events });
  RcaAnswer.parse(a);
  assert.equal(a.candidates[0].service, 'rag');
  assert.equal(a.candidates[0].pod, syntheticTrace({ seed: 1, fault: { hop: 'rag', kind: 'latency' } }).truth!.pod);
  const ev = a.candidates[0].evidence.find((e) => e.kind === 'self_time')!;
  assert.equal(ev.traces, 10);
  assert.match(ev.summary, /10 of 30 traces/);
  assert.equal(a.window.traces, 30);
  assert.ok(a.window.anomalousTraces >= 10);
  assert.equal(a.criticalPath.length, 0);
});

test('window: network faults win through the gap and the kernel evidence; errors through their origin', () => {
  const net = incident('tool', 'tcp_retransmit', 6, 14);
  const a = rankWindow({ traces: net.traces, baseline, kernelEvents: net.events });
  assert.equal(a.candidates[0].service, 'tool');
  assert.ok(a.candidates[0].evidence.some((e) => e.kind === 'kernel:tcp_retransmit'));
  const err = incident('embedding', 'error', 5, 15);
  const b = rankWindow({ traces: err.traces.flat(), baseline: baselineTraces });
  assert.equal(b.candidates[0].service, 'embedding');
  assert.ok(b.candidates[0].evidence.some((e) => e.kind === 'error' && e.traces === 5));
});

test('window without a baseline compares with its own medians and says so', () => {
  const { traces } = incident('rag', 'latency', 6, 24);
  const a = rankWindow({ traces });
  assert.equal(a.candidates[0].service, 'rag');
  assert.ok(a.missing.some((m) => /baseline: none given/.test(m)));
});

test('window: a trace split in two (the context was lost at a hop) is reported', () => {
  const { traces } = incident('rag', 'latency', 2, 6);
  const victim = traces[3];
  const agentServer = victim.find((s) => s.service === 'agent' && s.kind === 'server')!;
  const sub = new Set([agentServer.spanId]);
  for (let grew = true; grew;) {
    grew = false;
    for (const s of victim)
      if (s.parentSpanId && sub.has(s.parentSpanId) && !sub.has(s.spanId)) {
        sub.add(s.spanId);
        grew = true;
      }
  }
  const newId = 'f'.repeat(32);
  const split = victim.map((s) => (sub.has(s.spanId) ? { ...s, traceId: newId } : s));
  const all = [...traces.slice(0, 3), ...traces.slice(4), split].flat();
  const a = rankWindow({ traces: all, baseline });
  assert.ok(
    a.missing.some((m) => /restart at agent/.test(m)),
    JSON.stringify(a.missing)
  );
  assert.equal(a.window.traces, traces.length + 1);
});

test('window: deterministic', () => {
  const { traces, events } = incident('rag', 'latency', 4, 8);
  const x = rankWindow({ traces, baseline, kernelEvents: events });
  const y = rankWindow({ traces: structuredClone(traces), baseline, kernelEvents: structuredClone(events) });
  assert.deepEqual({ ...x, tookMs: 0 }, { ...y, tookMs: 0 });
});
