/**
 * Regression from the real chain (proxy case "critical path", trace 3b1c5b02…): a `rag` latency fault ranked
 * `gateway` first. The chain's spans come from the OpenTelemetry JS SDK, which stamps a span's start with
 * `Date.now()` (whole milliseconds) and its end with start + a high-resolution duration: every span sits up to 1 ms
 * early, by its own amount. So the next sequential call can appear to start before the slow one ended (lookup ends
 * 416.032, chat starts 416), and a callee's server span can start before, or end after, its client span. The trace
 * below keeps that trace's shape and timing (ms from the root's start), trimmed to what matters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Span } from '../../../contract';
import { buildBaseline, rankTrace } from '../../../backend-proxy/src/rca';
import { rng } from '../../support/rca/synthetic';
import { buildTree, criticalPath } from '../../../backend-proxy/src/rca/tree';
import { sp } from './helpers';

/** The failing trace's exact numbers (ms from its start). */
function caseTrace(): Span[] {
  return [
    sp('1', undefined, 'gateway', 'POST /v1/chat/completions', 'server', 0, 426.178),
    sp('2', '1', 'gateway', 'embeddings', 'client', 0, 2.822),
    sp('3', '2', 'embedding', 'embeddings', 'server', 0, 2.352),
    sp('4', '1', 'gateway', 'POST /v1/lookup', 'client', 3, 416.032), // ends 0.032 ms after the chat call "starts"
    sp('5', '4', 'vector-cache', 'lookup', 'server', 3, 415.424),
    sp('6', '5', 'vector-cache', 'POST /v1/retrieve', 'client', 10, 414.932),
    sp('7', '6', 'rag', 'retrieval', 'server', 11, 414.95), // ends after its client span: another process's clock
    sp('8', '1', 'gateway', 'chat', 'client', 416, 425.747),
    sp('9', '8', 'llm-vllm', 'chat', 'server', 416, 424.745),
  ];
}

/**
 * The same request shape with true (sub-ms) times, then stamped as the SDK does: start floored to the millisecond,
 * end = floored start + exact duration. `ragMs` is rag's own work.
 */
function chainTrace(seed: number, ragMs: number): Span[] {
  const r = rng(seed);
  const j = (x: number): number => x * (0.9 + 0.2 * r());
  const out: Span[] = [];
  const stamp = (
    id: string,
    parent: string | undefined,
    service: string,
    name: string,
    kind: Span['kind'],
    s: number,
    e: number
  ): void => {
    const start = Math.floor(s);
    out.push(sp(id, parent, service, name, kind, start, start + (e - s)));
  };
  const base = 1000 + r();
  let t = base + 0.3;
  const embEnd = t + j(2.5);
  stamp('2', '1', 'gateway', 'embeddings', 'client', t, embEnd);
  stamp('3', '2', 'embedding', 'embeddings', 'server', t + 0.2, embEnd - 0.3);
  t = embEnd + 0.1;
  const vcStart = t + 0.2;
  const retrieveStart = vcStart + j(6);
  const ragEnd = retrieveStart + 0.4 + ragMs;
  const vcEnd = ragEnd + 0.5 + j(0.5);
  const lookupEnd = vcEnd + 0.6;
  stamp('4', '1', 'gateway', 'POST /v1/lookup', 'client', t, lookupEnd);
  stamp('5', '4', 'vector-cache', 'lookup', 'server', vcStart, vcEnd);
  stamp('6', '5', 'vector-cache', 'POST /v1/retrieve', 'client', retrieveStart, ragEnd + 0.3);
  stamp('7', '6', 'rag', 'retrieval', 'server', retrieveStart + 0.2, ragEnd);
  t = lookupEnd + 0.05;
  const chatEnd = t + j(10);
  stamp('8', '1', 'gateway', 'chat', 'client', t, chatEnd);
  stamp('9', '8', 'llm-vllm', 'chat', 'server', t + 0.3, chatEnd - 0.7);
  stamp('1', undefined, 'gateway', 'POST /v1/chat/completions', 'server', base, chatEnd + 0.4);
  return out;
}

const healthy = buildBaseline(Array.from({ length: 30 }, (_, i) => chainTrace(i + 1, 3 + (i % 5) * 0.2)));
const onPath = (a: ReturnType<typeof rankTrace>, service: string, kind: string): number =>
  (a.criticalPath as Array<{ service: string; kind: string; onPathMs: number }>)
    .filter((p) => p.service === service && p.kind === kind)
    .reduce((x, p) => x + p.onPathMs, 0);

test('proxy case: the slow rag branch stays on the critical path when the next call starts a hair before it ends', () => {
  const spans = caseTrace();
  const t = buildTree(spans);
  const segs = criticalPath(t, 0);
  // The path tiles the request, and the slow branch is walked: gateway itself accounts for ~1 ms, not 413.
  assert.ok(Math.abs(segs.reduce((x, s) => x + s.endMs - s.startMs, 0) - 426.178) < 1e-6);
  const own = (service: string, kind: string): number =>
    segs
      .filter((s) => spans[s.index].service === service && spans[s.index].kind === kind)
      .reduce((x, s) => x + s.endMs - s.startMs, 0);
  assert.ok(own('rag', 'server') > 400, `rag on path ${own('rag', 'server')}`);
  assert.ok(own('gateway', 'server') < 2, `gateway self on path ${own('gateway', 'server')}`);
  assert.ok(own('llm-vllm', 'server') > 8);

  const a = rankTrace({ spans, baseline: healthy });
  assert.equal(a.candidates[0].service, 'rag', JSON.stringify(a.candidates.slice(0, 2)));
  assert.ok(a.candidates[0].evidence.some((e) => e.kind === 'self_time'));
  const gw = a.candidates.find((c) => c.service === 'gateway');
  assert.ok(!gw || gw.score < a.candidates[0].score / 10, JSON.stringify(gw));
  assert.ok(onPath(a, 'gateway', 'server') < 2);
});

test('millisecond-stamped starts: rag latency ranks rag first whatever the sub-ms offsets, healthy traces blame nothing', () => {
  for (let seed = 100; seed < 140; seed++) {
    const a = rankTrace({ spans: chainTrace(seed, 400), baseline: healthy });
    assert.equal(
      a.candidates[0].service,
      'rag',
      `seed ${seed}: ${JSON.stringify(a.candidates.slice(0, 2).map((c) => [c.service, c.score]))}`
    );
    assert.ok(onPath(a, 'rag', 'server') > 390, `seed ${seed}: rag on path ${onPath(a, 'rag', 'server')}`);
    assert.ok(
      onPath(a, 'gateway', 'server') < 3,
      `seed ${seed}: gateway self on path ${onPath(a, 'gateway', 'server')}`
    );
    const calm = rankTrace({ spans: chainTrace(seed, 3.2), baseline: healthy });
    assert.ok(
      calm.candidates.every((c) => c.score < 0.05),
      `seed ${seed}: ${JSON.stringify(calm.candidates.slice(0, 2).map((c) => [c.service, c.score]))}`
    );
  }
});

test('a callee server span starting before its client span (or ending after it) keeps the branch on the path', () => {
  const spans = caseTrace();
  // rag's server span 0.6 ms before vector-cache's client span, the lookup's server span 0.4 ms before the gateway's.
  spans[6].startMs = 9.4;
  spans[6].endMs = 414.5;
  spans[4].startMs = 2.6;
  const a = rankTrace({ spans, baseline: healthy });
  assert.equal(a.candidates[0].service, 'rag');
  assert.ok(onPath(a, 'rag', 'server') > 400);
});
