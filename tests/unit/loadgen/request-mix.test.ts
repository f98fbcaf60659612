/**
 * What each request is (model, route, backend, prompt) in the asked proportions; what the answer says (fallback →
 * degraded, RAG recall, agent outcome); trace ids from traceresponse; the slowest and failed requests kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunRequest } from '../../../contract/runs';
import { answerInfo, gradeAnswer } from '../../../loadgen/src/load/answer';
import { RequestLedger } from '../../../loadgen/src/load/ledger';
import { requestPlanner } from '../../../loadgen/src/load/mix';
import { newTraceparent, parseTraceresponse } from '../../../loadgen/src/load/trace-context';

describe('request mix', () => {
  it('models, routes and backends in the asked proportions, independently of each other, per seed', () => {
    const plan = requestPlanner({
      models: { a: 3, b: 1 },
      routes: { chat: 1, rag: 2, agent: 1 },
      backend: 'mix',
      prompts: { kind: 'synth' },
      seed: 4,
    });
    const n = 2000;
    const reqs = Array.from({ length: n }, (_, i) => plan(i));
    const share = (f: (r: (typeof reqs)[number]) => boolean) => reqs.filter(f).length / n;
    assert.ok(Math.abs(share((r) => r.model === 'a') - 0.75) < 0.01);
    assert.ok(
      Math.abs(share((r) => r.route === 'rag') - 0.5) < 0.01 &&
        Math.abs(share((r) => r.route === 'agent') - 0.25) < 0.01
    );
    assert.ok(Math.abs(share((r) => r.backend === 'tgi') - 0.5) < 0.01);
    // Independence: model b appears on both backends and every route.
    for (const backend of ['vllm', 'tgi'])
      for (const route of ['chat', 'rag', 'agent'])
        assert.ok(
          reqs.some((r) => r.model === 'b' && r.backend === backend && r.route === route),
          `${backend}/${route}`
        );
    assert.deepEqual(
      plan(17),
      requestPlanner({
        models: { a: 3, b: 1 },
        routes: { chat: 1, rag: 2, agent: 1 },
        backend: 'mix',
        prompts: { kind: 'synth' },
        seed: 4,
      })(17)
    );
    assert.equal(reqs.at(-1)!.messages.at(-1)!.role, 'user');
  });

  it('dataset lines: in order or shuffled, their route and model win over the mixes', () => {
    const lines = [
      { prompt: 'one' },
      { prompt: 'two', route: 'agent' as const, model: 'special' },
      { messages: [{ role: 'user' as const, content: 'three' }], expected: { documents: ['d1'] } },
    ];
    const seq = requestPlanner({
      models: { m: 1 },
      routes: { chat: 1, rag: 0, agent: 0 },
      backend: 'none',
      prompts: { kind: 'dataset', lines, order: 'sequential' },
      seed: 1,
    });
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => seq(i).messages[0].content),
      ['one', 'two', 'three', 'one']
    );
    assert.equal(seq(1).route, 'agent');
    assert.equal(seq(1).model, 'special');
    assert.equal(seq(0).route, 'chat');
    assert.deepEqual(seq(2).expected, { documents: ['d1'] });
    assert.equal(seq(0).backend, 'none');
    const shuf = requestPlanner({
      models: { m: 1 },
      routes: { chat: 1, rag: 0, agent: 0 },
      backend: 'none',
      prompts: { kind: 'dataset', lines, order: 'shuffle' },
      seed: 1,
    });
    const seen = new Set(Array.from({ length: 60 }, (_, i) => shuf(i).messages[0].content));
    assert.equal(seen.size, 3);
  });
});

describe('answers', () => {
  const info = (o: Record<string, unknown> = {}) => ({
    hopscope: { route: 'rag', requestedModel: 'big', responseModel: 'big', documents: ['d1', 'd2', 'd3'], ...o },
  });

  it('a fallback model is degraded; recall against expected documents; the agent outcome', () => {
    assert.deepEqual(gradeAnswer(answerInfo(info()), undefined), {
      degraded: false,
      detail: undefined,
      responseModel: 'big',
    });
    const fb = gradeAnswer(answerInfo(info({ responseModel: 'small' })), undefined);
    assert.equal(fb.degraded, true);
    assert.equal(fb.detail, 'fallback:big→small');
    assert.equal(gradeAnswer(answerInfo(info()), { documents: ['d1', 'd9'] }).recall, 0.5);
    assert.equal(gradeAnswer(answerInfo(info({ route: 'direct' })), { documents: ['d1'] }).recall, undefined);
    assert.equal(
      gradeAnswer(answerInfo(info({ route: 'agent', agent: { task: 'failed', toolCalls: 1, steps: 2 } })), undefined)
        .agentTask,
      'failed'
    );
  });

  it('an answer without (valid) info grades nothing: real servers are never called degraded', () => {
    assert.equal(answerInfo({ choices: [] }), undefined);
    assert.equal(answerInfo({ hopscope: { route: 'nowhere' } }), undefined);
    assert.deepEqual(gradeAnswer(undefined, { documents: ['x'] }), { degraded: false });
  });
});

describe('trace context', () => {
  it('traceresponse: the trace id and sampled flag; malformed or invalid ones are ignored', () => {
    assert.deepEqual(parseTraceresponse('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      sampled: true,
    });
    assert.deepEqual(parseTraceresponse(['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00']), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      sampled: false,
    });
    assert.equal(parseTraceresponse(undefined), undefined);
    assert.equal(parseTraceresponse('00-00000000000000000000000000000000-b7ad6b7169203331-01'), undefined);
    assert.equal(parseTraceresponse('ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), undefined);
    assert.equal(parseTraceresponse('garbage'), undefined);
  });

  it('a sent traceparent carries a fresh sampled trace id', () => {
    const a = newTraceparent(),
      b = newTraceparent();
    assert.match(a.header, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.ok(a.header.includes(a.traceId));
    assert.notEqual(a.traceId, b.traceId);
  });
});

describe('request ledger', () => {
  const req = (e2eMs: number, outcome: RunRequest['outcome'] = 'ok', startMs = e2eMs): RunRequest => ({
    traceId: null,
    traceIdSource: 'none',
    startMs,
    e2eMs,
    ttftMs: null,
    outcome,
  });

  it('keeps the K slowest served requests, slowest first', () => {
    const l = new RequestLedger(10, 1);
    const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 1000);
    for (const v of values) l.add(v, true, false, 'none', false, () => req(v));
    assert.deepEqual(
      l.slowest().map((r) => r.e2eMs),
      [...values].sort((a, b) => b - a).slice(0, 10)
    );
  });

  it('samples failed and degraded requests uniformly over the run, in start order, and counts trace id sources', () => {
    const l = new RequestLedger(20, 3);
    for (let i = 0; i < 2000; i++)
      l.add(1, false, true, i % 4 === 0 ? 'traceresponse' : 'none', i % 8 === 0, () => req(1, 'error', i));
    const kept = l.failed();
    assert.equal(kept.length, 20);
    assert.deepEqual(
      kept.map((r) => r.startMs),
      [...kept.map((r) => r.startMs)].sort((a, b) => a - b)
    );
    assert.ok(
      kept.some((r) => r.startMs >= 1000),
      'not only the first failures'
    );
    assert.deepEqual(l.traceIds, { sent: 0, traceresponse: 500, none: 1500, sampled: 250 });
    assert.equal(l.slowest().length, 0, 'errors are not among the slowest served');
  });
});
