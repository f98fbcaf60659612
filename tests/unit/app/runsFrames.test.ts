/**
 * The Runs pages' frames from contract answers (parsed with the contract's schemas, as the app's client does): the runs
 * list (links to each run's page over its window, verdicts, live figures), a run's parts (summary, verdicts, faults
 * as annotations, quality, the request tables one click from the root cause or saying there is no trace id), the
 * compare (ranked hops, per-hop deltas, client side by side) and client vs server TTFT (series, clocks, the gap).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataFrame } from '@grafana/data';

import { RunCompareAnswer, RunList, RunRecord, RunTtftAnswer } from '../../../contract';
import {
  faultWindow,
  requestsFrame,
  runMarksFrame,
  runCompareFrames,
  runCompareNotices,
  runFrames,
  runNotices,
  runsFrame,
  runsNotices,
  runTtftFrames,
  runTtftNotices,
  runUrl,
} from '../../../src/datasource/frames/runs';

const col = (f: DataFrame, name: string) => f.fields.find((x) => x.name === name)!;
const T0 = 1_780_000_000_000;
const TRACE = 'ab'.repeat(16);

const lat = (p50: number, p99: number) => ({
  count: 100,
  mean: p50 * 1.1,
  p50,
  p90: p99 * 0.8,
  p95: p99 * 0.9,
  p99,
  max: p99 * 1.2,
});
const summary = {
  durationS: 20,
  sent: 160,
  completed: 160,
  succeeded: 158,
  degraded: 0,
  errors: { total: 2, byKind: { http_503: 2 } },
  timeouts: 0,
  droppedClientSide: 0,
  rps: { targetMean: 8, sent: 8, completed: 8 },
  latencyMs: lat(300, 900),
  ttftMs: lat(40, 120),
  itlMs: lat(5, 9),
  tpotMs: lat(5, 8),
  outputTokens: 4000,
  outputTokensPerS: 200,
  goodput: { good: 150, rps: 7.5, ratio: 0.9375 },
  schedule: { lateOver10ms: 0, lateRatio: 0, lateP99Ms: 1, lateMaxMs: 2 },
  quality: { ragRecall: { mean: 0.64, n: 80 }, agentTaskCompletion: { rate: null, n: 0 } },
  untraced: 1,
  notes: [],
};
const item = (runId: string, o: Record<string, unknown> = {}) => ({
  runId,
  scenario: 'single-turn-short',
  status: 'passed',
  startMs: T0,
  endMs: T0 + 20_000,
  durationS: 20,
  targetRps: 8,
  achievedRps: 8,
  ttftP99Ms: 120,
  e2eP99Ms: 900,
  goodputRatio: 0.9375,
  errors: 2,
  errorRate: 0.0125,
  workers: 1,
  live: null,
  ...o,
});
const record = RunRecord.parse({
  ...item('story-2', { status: 'failed' }),
  target: 'http://127.0.0.1:3310/v1/chat/completions',
  options: { scenario: { target: { backend: 'vllm' } } },
  baselineRunId: 'story-1',
  thresholds: [{ threshold: 'p99_ms<5000', metric: 'p99_ms', actual: 900, pass: true }],
  regressions: [
    { metric: 'p99_ms', allowed: '+10%', baseline: 600, actual: 900, delta: 300, deltaRatio: 0.5, pass: false },
  ],
  summary,
  merge: null,
  abortReason: null,
  faults: [{ atS: 5, target: 'rag', kind: 'latency', magnitude: 150, forS: 10, id: 'f-1', startMs: T0 + 5_010 }],
  slowest: [
    {
      traceId: TRACE,
      traceIdSource: 'sent',
      startMs: T0 + 7_000,
      e2eMs: 1200,
      ttftMs: 300,
      outcome: 'ok',
      route: 'rag',
      backend: 'vllm',
      model: 'hopscope-llama-8b-v1',
    },
    {
      traceId: null,
      traceIdSource: 'none',
      startMs: T0 + 9_000,
      e2eMs: 1100,
      ttftMs: 280,
      outcome: 'ok',
      route: 'chat',
    },
  ],
  failed: [
    {
      traceId: TRACE.replace(/a/g, 'c'),
      traceIdSource: 'traceresponse',
      startMs: T0 + 8_000,
      e2eMs: 30,
      ttftMs: null,
      outcome: 'error',
      detail: 'http_503',
    },
  ],
});

describe('runs list', () => {
  const list = RunList.parse({
    total: 3,
    runs: [
      item('live-1', {
        status: 'running',
        startMs: T0 + 100_000,
        endMs: null,
        durationS: null,
        achievedRps: null,
        errors: null,
        live: { sent: 80, completed: 70, errors: 1, inFlight: 10, lastHeartbeatMs: T0 + 109_000 },
      }),
      item('story-2', { status: 'failed' }),
    ],
  });
  const f = runsFrame(list, T0 + 110_000);

  test('each run links to its own page over its own window (a running one up to now)', () => {
    assert.deepEqual(col(f, 'runUrl').values, [
      `/a/hopscope-rca-app/runs/live-1?from=${T0 + 100_000}&to=now`,
      `/a/hopscope-rca-app/runs/story-2?from=${T0}&to=${T0 + 20_000}`,
    ]);
    const link = col(f, 'runId').config.links![0];
    assert.equal(link.url, '${__data.fields.runUrl:raw}');
    assert.equal((link as { oneClick?: boolean }).oneClick, true);
    assert.equal(col(f, 'runUrl').config.custom.hidden, true);
  });

  test('the verdict, coloured by the theme; a running run shows its live figures', () => {
    assert.deepEqual(col(f, 'status').values, ['running', 'failed']);
    assert.equal(col(f, 'status').config.custom.cellOptions.type, 'color-text');
    assert.deepEqual(col(f, 'duration').values, [10, 20]);
    assert.deepEqual(col(f, 'achievedRps').values, [7, 8]);
    assert.deepEqual(col(f, 'errors').values, [1, 2]);
    assert.equal(col(f, 'live').values[0], '80 sent · 70 done · 1 errors · 10 in flight (1 s ago)');
    assert.equal(col(f, 'live').values[1], '');
    assert.equal(col(f, 'ttftP99').config.unit, 'ms');
    assert.equal(col(f, 'goodput').config.unit, 'percentunit');
    assert.deepEqual(f.meta?.custom, { total: 3, running: 1 });
  });

  test("as marks for other pages: each run's start … end (… now while it runs) as an annotation region", () => {
    const m = runMarksFrame(list, T0 + 110_000);
    assert.equal(m.meta?.dataTopic, 'annotations');
    assert.deepEqual(col(m, 'time').values, [T0 + 100_000, T0]);
    assert.deepEqual(col(m, 'timeEnd').values, [T0 + 110_000, T0 + 20_000]);
    assert.deepEqual(col(m, 'title').values, [
      'run live-1 (single-turn-short): running',
      'run story-2 (single-turn-short): failed',
    ]);
  });

  test('more runs than shown: a notice says so', () => {
    assert.deepEqual(runsNotices(list), [{ severity: 'info', text: 'Showing the newest 2 of 3 runs in this range' }]);
  });
});

describe('one run', () => {
  const frames = runFrames(record, 'run', T0 + 60_000);
  const part = (p: string) => frames.find((x) => x.refId === (p ? `run:${p}` : 'run'))!;

  test('parts by refId: summary, thresholds, faults, faultList, quality, slowest, failed', () => {
    assert.deepEqual(
      frames.map((x) => x.refId),
      ['run', 'run:thresholds', 'run:faults', 'run:faultList', 'run:quality', 'run:slowest', 'run:failed']
    );
    const s = part('');
    assert.deepEqual(
      s.fields.map((x) => x.config.displayName),
      [
        'Verdict',
        'Duration',
        'Target rate',
        'Achieved rate',
        'Client TTFT P99',
        'E2E P99',
        'Goodput',
        'Errors',
        'Requests sent',
      ]
    );
    assert.deepEqual(
      s.fields.map((x) => x.values[0]),
      ['failed', 20, 8, 8, 120, 900, 0.9375, 2, 160]
    );
  });

  test('threshold and regression verdicts, the failed gate named with its baseline run', () => {
    const t = part('thresholds');
    assert.deepEqual(col(t, 'verdict').values, ['pass', 'FAIL']);
    assert.deepEqual(col(t, 'kind').values, ['threshold', 'regression vs story-1']);
    assert.deepEqual(col(t, 'rule').values, ['p99_ms<5000', 'p99_ms:+10%']);
    assert.deepEqual(col(t, 'baseline').values, [null, 600]);
    assert.deepEqual(col(t, 'delta').values, [null, 0.5]);
  });

  test('faults as annotations over their applied window, and as a table', () => {
    const a = part('faults');
    assert.equal(a.meta?.dataTopic, 'annotations');
    assert.deepEqual(col(a, 'time').values, [T0 + 5_010]);
    assert.deepEqual(col(a, 'timeEnd').values, [T0 + 15_010]);
    assert.equal(col(a, 'title').values[0], 'fault latency on rag, magnitude 150');
    assert.deepEqual(
      part('faultList')
        .fields.filter((x) => !x.config.custom?.hidden)
        .map((x) => x.values[0]),
      ['rag', 'latency', 150, T0 + 5_010, T0 + 15_010, 'applied (chain fault f-1)']
    );
    // Not applied yet: where the schedule puts it.
    assert.deepEqual(faultWindow(record, { atS: 2, target: 'rag', kind: 'error' }), {
      start: T0 + 2000,
      end: T0 + 20_000,
    });
  });

  test('quality: average TTFT, RAG recall, agent task completion (none here, and the cell says why)', () => {
    const q = part('quality');
    assert.deepEqual(
      q.fields.map((x) => x.values[0]),
      ['single-turn-short', 'story-2', 44, 0.64, 80, null, 0]
    );
    assert.equal(col(q, 'agentCompletion').config.noValue, 'no agent requests');
  });

  test("the slowest requests open their root cause over the run's window; an untraced one says so and opens its window's traces", () => {
    const s = part('slowest');
    assert.deepEqual(col(s, 'trace').values, [TRACE, 'no trace id from the server']);
    assert.deepEqual(col(s, 'traceUrl').values, [
      `/a/hopscope-rca-app/traces/${TRACE}?from=${T0}&to=${T0 + 20_000}`,
      `/a/hopscope-rca-app/traces?from=${T0 + 8_000}&to=${T0 + 11_100}`,
    ]);
    assert.deepEqual(col(s, 'linkTitle').values, [
      'Root cause of this trace',
      'No trace id from the server: the traces of its window',
    ]);
    assert.equal(col(s, 'trace').config.links![0].title, '${__data.fields.linkTitle}');
    assert.deepEqual(col(part('failed'), 'outcome').values, ['error']);
    assert.deepEqual(col(part('failed'), 'detail').values, ['http_503']);
  });

  test('a request links to its trace only when the trace was sampled; an unsampled one says so', () => {
    const [kept, unknown] = record.slowest;
    const f = requestsFrame(
      record,
      [
        { ...kept, traceSampled: true },
        { ...kept, traceSampled: false, startMs: T0 + 8_000, e2eMs: 1000 },
        // A record written before traceSampled: linked as it was.
        { ...kept, traceSampled: undefined },
        unknown,
      ],
      'slowest',
      'x'
    );
    assert.deepEqual(col(f, 'trace').values, [TRACE, 'trace not sampled', TRACE, 'no trace id from the server']);
    assert.deepEqual(col(f, 'traceUrl').values, [
      `/a/hopscope-rca-app/traces/${TRACE}?from=${T0}&to=${T0 + 20_000}`,
      `/a/hopscope-rca-app/traces?from=${T0 + 7_000}&to=${T0 + 10_000}`,
      `/a/hopscope-rca-app/traces/${TRACE}?from=${T0}&to=${T0 + 20_000}`,
      `/a/hopscope-rca-app/traces?from=${T0 + 8_000}&to=${T0 + 11_100}`,
    ]);
    assert.deepEqual(col(f, 'linkTitle').values, [
      'Root cause of this trace',
      'Trace not sampled: the traces of its window',
      'Root cause of this trace',
      'No trace id from the server: the traces of its window',
    ]);
  });

  test('notices: untraced requests counted', () => {
    assert.deepEqual(
      runNotices(record).map((n) => n.text),
      ['1 requests had no trace id from the server']
    );
  });

  test('a running run links up to now', () => {
    assert.equal(
      runUrl({ runId: 'r', startMs: 5, endMs: null, status: 'running' }),
      '/a/hopscope-rca-app/runs/r?from=5&to=now'
    );
  });
});

describe('compare with another run', () => {
  const a = RunCompareAnswer.parse({
    runId: 'story-2',
    baselineRunId: 'story-1',
    tookMs: 12.5,
    criticalPath: [],
    missing: [],
    candidates: [
      {
        rank: 1,
        service: 'rag',
        pod: 'rag-1',
        operation: 'retrieval',
        score: 0.8,
        selfMs: 190,
        baselineMs: 40,
        evidence: [{ kind: 'self_time', summary: 'against baseline run story-1: own time 190 ms vs 40 ms' }],
      },
      { rank: 2, service: 'gateway', pod: 'gateway-0', score: 0.1, evidence: [] },
    ],
    hops: [
      {
        service: 'rag',
        operation: 'retrieval',
        runP50Ms: 190,
        runP99Ms: 260,
        baselineP50Ms: 40,
        baselineP99Ms: 90,
        deltaP50Ms: 150,
        runCount: 80,
        baselineCount: 78,
      },
      {
        service: 'gateway',
        runP50Ms: 2,
        runP99Ms: null,
        baselineP50Ms: 2,
        baselineP99Ms: 4,
        deltaP50Ms: 0,
        runCount: 160,
        baselineCount: 160,
      },
    ],
    traces: { run: 160, baseline: 158, source: 'embedded', sampled: false },
    client: {
      run: { e2eP99Ms: 900, ttftP99Ms: 120, errorRate: 0.01 },
      baseline: { e2eP99Ms: 600, ttftP99Ms: 100, errorRate: 0 },
    },
  });
  const [ranked, hops, client] = runCompareFrames(a, 'cmp');

  test('ranked hops with their evidence, the faulted hop first', () => {
    assert.equal(ranked.refId, 'cmp');
    assert.deepEqual(col(ranked, 'service').values, ['rag', 'gateway']);
    assert.equal(col(ranked, 'evidence').values[0], 'Own time: against baseline run story-1: own time 190 ms vs 40 ms');
  });

  test('per-hop deltas with a bar per hop; P99 delta where both sides have one', () => {
    assert.equal(hops.refId, 'cmp:hops');
    assert.deepEqual(col(hops, 'hop').values, ['rag retrieval', 'gateway']);
    assert.deepEqual(col(hops, 'deltaP50').values, [150, 0]);
    assert.deepEqual(col(hops, 'deltaP99').values, [170, null]);
    assert.equal(col(hops, 'deltaP50').config.custom.cellOptions.type, 'gauge');
  });

  test("the client's figures side by side with the change", () => {
    assert.equal(client.refId, 'cmp:client');
    assert.deepEqual(col(client, 'figure').values, ['Client E2E P99', 'Client TTFT P99', 'Error rate', 'Traces read']);
    assert.equal(col(client, 'run').config.displayName, 'story-2');
    assert.deepEqual(
      col(client, 'change').values.map((v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000)),
      [0.5, 0.2, null, 0.013]
    );
    assert.match(runCompareNotices(a)[0].text, /160 traces of story-2 against 158 of story-1 \(embedded\)/);
  });

  test('both runs’ capacity side by side when either is a sweep or a ramp: max good rate and knee (null: no knee)', () => {
    const cap = (maxGoodRps: number | null, kneeRps: number | null) => ({
      maxGoodRps,
      kneeRps,
      kneeAtMs: kneeRps === null ? null : T0,
      bottleneck: null,
      next: null,
      note: null,
      lowerBound: false,
    });
    const [, , withCap] = runCompareFrames(a, 'cmp', { run: cap(8, 10), baseline: cap(12, null) });
    const figures = col(withCap, 'figure').values as string[];
    assert.deepEqual(figures.slice(-2), ['Max good rate (req/s)', 'Knee (req/s)']);
    assert.deepEqual(col(withCap, 'run').values.slice(-2), [8, 10]);
    assert.deepEqual(col(withCap, 'baseline').values.slice(-2), [12, null]);
    assert.deepEqual(
      col(withCap, 'change')
        .values.slice(-2)
        .map((v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000)),
      [-0.333, null]
    );
    // Two constant runs: no capacity rows.
    const [, , none] = runCompareFrames(a, 'cmp', { run: null, baseline: undefined });
    assert.equal(col(none, 'figure').values.length, 4);
  });
});

describe('client vs server TTFT', () => {
  const fig = (metric: string, count: number, mean: number, p99: number) => ({
    metric,
    query: `sum by (le) (increase(${metric}_bucket[20s]))`,
    count,
    meanMs: mean,
    p50Ms: mean * 0.9,
    p90Ms: p99 * 0.8,
    p99Ms: p99,
  });
  const a = RunTtftAnswer.parse({
    runId: 'story-2',
    from: T0,
    to: T0 + 20_000,
    stepMs: 1000,
    layers: [
      {
        layer: 'client',
        label: 'Client (hopscope-load)',
        covers: 'sent → first chunk',
        figures: fig('hopscope_load_time_to_first_token_seconds', 158, 40, 120),
      },
      {
        layer: 'server',
        label: 'vLLM (server)',
        covers: 'arrival → first token',
        figures: fig('vllm:time_to_first_token_seconds', 150, 10, 30),
      },
      { layer: 'server_queue', label: 'vLLM queue', covers: 'arrival → scheduled', figures: null },
    ],
    gap: {
      meanMs: 30,
      p99DifferenceMs: 90,
      parts: [
        {
          part: 'before_server',
          label: 'Before vLLM',
          meanMs: 30,
          measured: false,
          source: 'client mean − vLLM mean',
          side: 'gap',
        },
        {
          part: 'server_queue',
          label: 'Queue',
          meanMs: null,
          measured: false,
          source: 'vllm:request_queue_time_seconds',
          side: 'server',
        },
        {
          part: 'server_prefill',
          label: 'Prefill',
          meanMs: 9,
          measured: true,
          source: 'vllm:request_prefill_time_seconds',
          side: 'server',
        },
      ],
    },
    series: [
      {
        layer: 'client',
        stat: 'p99',
        query: 'histogram_quantile(0.99, …)',
        points: [
          [T0, 100],
          [T0 + 1000, null],
        ],
      },
      {
        layer: 'server',
        stat: 'p50',
        query: 'histogram_quantile(0.5, …)',
        points: [
          [T0, 9],
          [T0 + 1000, 11],
        ],
      },
    ],
    notes: ['vLLM counts every request it served'],
    missing: ["vllm:request_queue_time_seconds: no requests in the run's window"],
    sources: [{ source: 'prometheus', ok: true }],
  });
  const frames = runTtftFrames(a, 'ttft');

  test('one series per side and statistic, named for whose clock it is, the PromQL as the executed query', () => {
    const s = frames.filter((f) => f.refId === 'ttft:series');
    assert.deepEqual(
      s.map((f) => f.name),
      ['Client TTFT P99', 'vLLM TTFT P50']
    );
    assert.deepEqual(s[0].fields[1].values, [100, null]);
    assert.equal(s[0].meta?.executedQueryString, 'histogram_quantile(0.99, …)');
    assert.equal(s[1].fields[1].config.custom.lineStyle.fill, 'dash');
  });

  test('the figures per clock; a clock without data says so', () => {
    const l = frames.find((f) => f.refId === 'ttft:layers')!;
    assert.deepEqual(col(l, 'layer').values, ['Client (hopscope-load)', 'vLLM (server)', 'vLLM queue']);
    assert.deepEqual(col(l, 'mean').values, [40, 10, null]);
    assert.deepEqual(col(l, 'metric').values[2], 'no data in the window');
  });

  test("the gap part by part: how each is known (measured or a remainder), where it lies, its share of the client's mean", () => {
    const g = frames.find((f) => f.refId === 'ttft:gap')!;
    assert.deepEqual(col(g, 'how').values, [
      'remainder: client mean − vLLM mean',
      'remainder: vllm:request_queue_time_seconds',
      'measured: vllm:request_prefill_time_seconds',
    ]);
    assert.deepEqual(col(g, 'side').values, ['before vLLM (the gap)', "inside vLLM's TTFT", "inside vLLM's TTFT"]);
    assert.deepEqual(col(g, 'share').values, [0.75, null, 0.225]);
    assert.deepEqual(g.meta?.custom, { meanMs: 30, p99DifferenceMs: 90 });
    assert.deepEqual(
      runTtftNotices(a).map((n) => n.severity),
      ['info', 'warning']
    );
  });
});
