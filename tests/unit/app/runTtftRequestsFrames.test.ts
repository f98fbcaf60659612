import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataFrame } from '@grafana/data';
import { RunTtftRequestsAnswer } from '../../../contract';
import { runTtftRequestsFrames, runTtftRequestsNotices } from '../../../src/datasource/frames/run-ttft-requests';

const col = (f: DataFrame, name: string) => f.fields.find((x) => x.name === name)!;
const T0 = 1_780_000_000_000;
const TRACE = 'cd'.repeat(16);

describe('TTFT per request, decomposed (run page)', () => {
  // Parsed through the contract, as the client parses the proxy's answer.
  const a = RunTtftRequestsAnswer.parse({
    runId: 'run-1',
    requests: [
      {
        traceId: TRACE,
        list: 'slowest',
        outcome: 'ok',
        startMs: T0,
        ttftMs: 2900,
        e2eMs: 4100,
        llm: { service: 'llm-vllm', pod: 'llm-vllm-0', engine: 'vllm', spanId: 'ab'.repeat(8) },
        parts: [
          { part: 'client_to_gateway', label: 'Client → gateway', ms: 3, source: 'spans' },
          { part: 'before_llm', label: 'Hops before the LLM', ms: 60, source: 'spans' },
          { part: 'engine_queue', label: 'Engine queue', ms: 2800, source: 'gen_ai.latency.time_in_queue' },
          { part: 'engine_prefill', label: 'Prefill', ms: 30, source: 'gen_ai.latency.time_in_model_prefill' },
          { part: 'way_back', label: 'First chunk back', ms: 7, source: 'remainder' },
        ],
        missing: [],
      },
      {
        traceId: 'ef'.repeat(16),
        list: 'failed',
        outcome: 'error',
        startMs: T0 + 500,
        ttftMs: null,
        e2eMs: 30_000,
        llm: null,
        parts: [{ part: 'client_to_gateway', label: 'Client → gateway', ms: 4, source: 'spans' }],
        missing: ['no engine span in the trace'],
      },
    ],
    average: [{ part: 'engine_queue', label: 'Engine queue', meanMs: 2800, n: 1 }],
    notes: ['client and gateway clocks subtracted as they are'],
    missing: ['one request without an engine span'],
  });
  const [requests, average] = runTtftRequestsFrames(a, 'ttftRequests');

  test('one row per request, each part in its column, unknown parts empty, the engine named', () => {
    assert.equal(requests.refId, 'ttftRequests:requests');
    assert.deepEqual(col(requests, 'engine_queue').values, [2800, null]);
    assert.deepEqual(col(requests, 'way_back').values, [7, null]);
    assert.deepEqual(col(requests, 'ttft').values, [2900, null]);
    assert.deepEqual(col(requests, 'engine').values, ['vllm · llm-vllm-0', 'no engine span']);
  });

  test("the trace cell opens that trace's root cause around the request's own window", () => {
    const url = String(col(requests, 'traceUrl').values[0]);
    assert.match(url, new RegExp(`/traces/${TRACE}\\?`));
    assert.match(url, new RegExp(`from=${T0 - 1000}`));
    assert.ok(col(requests, 'trace').config.links?.length);
  });

  test('the means with their counts, and what is missing as warnings', () => {
    assert.equal(average.refId, 'ttftRequests:average');
    assert.deepEqual(col(average, 'mean').values, [2800]);
    assert.deepEqual(col(average, 'n').values, [1]);
    const notices = runTtftRequestsNotices(a);
    assert.deepEqual(
      notices.map((n) => n.severity),
      ['info', 'warning']
    );
  });
});
