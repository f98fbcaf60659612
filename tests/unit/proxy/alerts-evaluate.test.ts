import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlertRule, type KernelEvent } from '../../../contract';
import { evaluateRule, kernelMatches } from '../../../backend-proxy/src/alerts/evaluate';
import { DEFAULT_RULES } from '../../../backend-proxy/src/alerts/manager';

const ev = (ts: number, type: KernelEvent['type'], pod: string, durationMs?: number): KernelEvent => ({
  ts,
  type,
  pid: 1,
  comm: 'x',
  pod,
  durationMs,
  detail: {},
  mode: 'replay',
});
const seed = DEFAULT_RULES[0];
const tls = (pod: string, t0: number, durs: number[]): KernelEvent[] =>
  durs.map((d, i) => ev(t0 + i * 100, 'tls_handshake', pod, d));

test("the seed's rule fires: 3 consecutive slow handshakes and a GPU allocation failure within 5 s", () => {
  const v = evaluateRule(seed, {
    events: [...tls('llm-0', 10_000, [600, 700, 800]), ev(13_000, 'gpu_alloc_fail', 'llm-0')],
    metrics: new Map(),
  });
  assert.equal(v.firing, true);
  assert.equal(v.pod, 'llm-0');
  assert.equal(v.atMs, 13_000);
  assert.match(v.summary, /3 consecutive tls_handshake > 500 ms/);
});

test('a fast handshake breaks the run; counts are per pod', () => {
  assert.equal(
    kernelMatches(
      { kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 },
      tls('a', 0, [600, 100, 700, 800])
    ).length,
    0
  );
  const split = [...tls('a', 0, [600, 700]), ...tls('b', 50, [900])];
  assert.equal(
    kernelMatches({ kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 }, split).length,
    0
  );
  const v = evaluateRule(seed, {
    events: [...tls('llm-0', 10_000, [600, 100, 800, 900]), ev(10_500, 'gpu_alloc_fail', 'llm-0')],
    metrics: new Map(),
  });
  assert.equal(v.firing, false);
});

test('co-occurrence: too far apart does not fire', () => {
  const v = evaluateRule(seed, {
    events: [...tls('llm-0', 10_000, [600, 700, 800]), ev(30_000, 'gpu_alloc_fail', 'llm-0')],
    metrics: new Map(),
  });
  assert.equal(v.firing, false);
  assert.match(v.summary, /not within 5 s/);
});

test('metric conditions use the instant value; an unavailable metric is "unknown", not resolved', () => {
  const rule = AlertRule.parse({
    id: 'p99',
    name: 'p99',
    conditions: [{ kind: 'metric', expr: 'x', op: '>', threshold: 2 }],
  });
  const series = (v: number) => new Map([['x', [{ metric: {}, points: [[0, v] as [number, number | null]] }]]]);
  assert.equal(evaluateRule(rule, { events: [], metrics: series(3) }).firing, true);
  assert.equal(evaluateRule(rule, { events: [], metrics: series(1) }).firing, false);
  const u = evaluateRule(rule, { events: [], metrics: new Map([['x', new Error('prometheus: unreachable')]]) });
  assert.equal(u.firing, false);
  assert.match(u.unknown!, /unreachable/);
});

test('rules are validated', () => {
  assert.equal(
    AlertRule.safeParse({ id: 'bad id!', name: 'x', conditions: [{ kind: 'kernel', type: 'tls_handshake' }] }).success,
    false
  );
  assert.equal(AlertRule.safeParse({ id: 'ok', name: 'x', conditions: [] }).success, false);
  assert.equal(
    AlertRule.safeParse({ id: 'ok', name: 'x', conditions: [{ kind: 'kernel', type: 'nope' }] }).success,
    false
  );
});

test('the fast kernel-event check agrees with the zod schema', async () => {
  const { looksValid } = await import('../../../backend-proxy/src/sources/exporters');
  const { KernelEvent } = await import('../../../contract');
  const good = ev(1, 'tls_handshake', 'p', 5);
  const cases: unknown[] = [
    good,
    { ...good, traceId: 'a'.repeat(32) },
    { ...good, traceId: 'A'.repeat(32) },
    { ...good, type: 'nope' },
    { ...good, pid: -1 },
    { ...good, pid: 1.5 },
    { ...good, mode: 'fake' },
    { ...good, detail: [] },
    { ...good, durationMs: -1 },
    { ...good, ts: 'x' },
    null,
    3,
    { ...good, pod: 7 },
    { ...good, comm: undefined },
    { ...good, seq: 4, notable: true, labels: { app: 'llm' } },
    { ...good, seq: -1 },
    { ...good, seq: 1.5 },
    { ...good, notable: 'yes' },
    { ...good, labels: { app: 1 } },
    { ...good, labels: ['llm'] },
  ];
  for (const c of cases) if (looksValid(c)) assert.equal(KernelEvent.safeParse(c).success, true, JSON.stringify(c));
  assert.equal(looksValid(good), true);
  assert.equal(looksValid({ ...good, seq: 4, notable: true, labels: { app: 'llm' } }), true);
});
