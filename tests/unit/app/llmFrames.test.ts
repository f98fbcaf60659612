/**
 * Inside the inference server, as the panels get it: a root-cause answer's verdict and LLM phases (contract/rca.ts
 * `verdict`, `llmPhases`) → the verdict on the answer's facts, a phases table (each phase against its baseline and
 * how many times the usual) and an engine-state table (each figure with the metric it was read from), for one trace
 * (`rca` parts) and for a window (`windowRca`, with what it read); the Explain page's export asks for the window
 * answer, and the proxy's Markdown carries it. Answers are built from the contract's types and parsed with its
 * schemas first, as the API client does; metric names are vLLM's (fixtures/metrics/vllm/metrics-catalog.tsv, the
 * renamed `gpu_cache_usage_perc` included) and the span source vLLM's `llm_request` / `gen_ai.latency.*`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DataFrame } from '@grafana/data';

import { appLinks, RcaAnswer, RcaRangeAnswer } from '../../../contract';
import { renderPostmortem } from '../../../backend-proxy/src/services/postmortem-md';
import { engineStateRows, llmPhasesFrame, phaseRows } from '../../../src/datasource/frames/llm';
import { rcaAboutOfFrame, rcaFrames } from '../../../src/datasource/frames/traces';
import { windowAboutOfFrame, windowRcaFrames } from '../../../src/datasource/frames/windowRca';
import { exportParams } from '../../../src/transforms/exportParams';

const T0 = Date.UTC(2026, 11, 1, 10, 0, 0);
const col = (f: DataFrame, name: string) => {
  const x = f.fields.find((y) => y.name === name);
  assert.ok(x, `field ${name}`);
  return x.values;
};

const VERDICT =
  'llm-vllm-1 saturated: queued 2.8 s (usually 40 ms) behind 37 waiting requests, KV cache 98 %, 12 preemptions/min';

const answer = RcaAnswer.parse({
  traceId: 'ab'.repeat(16),
  tookMs: 4.1,
  candidates: [
    {
      rank: 1,
      service: 'llm-vllm',
      pod: 'llm-vllm-1',
      spanId: '00f067aa0ba902b7',
      operation: 'llm_request',
      score: 0.9,
      selfMs: 3100,
      baselineMs: 400,
      evidence: [{ kind: 'llm_queue', summary: 'queued 2.8 s (usually 40 ms) behind 37 waiting requests' }],
    },
  ],
  criticalPath: [],
  missing: ['prefix-cache hit rate: no vllm:prefix_cache_queries_total on llm-vllm-1'],
  verdict: VERDICT,
  llmPhases: [
    {
      spanId: '00f067aa0ba902b7',
      service: 'llm-vllm',
      pod: 'llm-vllm-1',
      engine: 'vllm',
      source: 'llm_request / gen_ai.latency.*',
      startMs: T0,
      durationMs: 3100,
      phases: [
        { name: 'queue', durationMs: 2800, startMs: T0, baselineMs: 40 },
        { name: 'prefill', durationMs: 60, baselineMs: 55 },
        { name: 'decode', durationMs: 240 },
      ],
      promptTokens: 640,
      completionTokens: 32,
      baselinePromptTokens: 600,
      engineState: {
        waiting: 37,
        running: 32,
        kvCacheUsage: 0.98,
        preemptionsPerMin: 12,
        provenance: [
          { figure: 'waiting', metric: 'vllm:num_requests_waiting', instantMs: T0, scrapeIntervalS: 15 },
          { figure: 'running', metric: 'vllm:num_requests_running', instantMs: T0, scrapeIntervalS: 15 },
          // An older release: the renamed KV-cache gauge is the one found, and the answer says so.
          { figure: 'kvCacheUsage', metric: 'vllm:gpu_cache_usage_perc', instantMs: T0, scrapeIntervalS: 15 },
          { figure: 'preemptionsPerMin', metric: 'vllm:num_preemptions_total', instantMs: T0, scrapeIntervalS: 15 },
        ],
      },
    },
  ],
});

describe('one trace: verdict and LLM phases', () => {
  const frames = rcaFrames(answer, 'rca');

  test("the verdict travels on the candidates' frame, and is absent when the answer has none", () => {
    assert.equal(rcaAboutOfFrame(frames[0])?.verdict, VERDICT);
    assert.equal(rcaAboutOfFrame(frames[0])?.llmSpans, 1);
    const none = rcaFrames(RcaAnswer.parse({ ...answer, verdict: undefined, llmPhases: undefined }), 'rca');
    assert.equal(rcaAboutOfFrame(none[0])?.verdict, undefined);
    assert.equal(none.find((f) => f.refId === 'rca:llmPhases')?.length, 0, 'no LLM span: an empty part');
  });

  test('each phase against its baseline: took, usually, × usual (none without a baseline)', () => {
    const phases = frames.find((f) => f.refId === 'rca:llmPhases')!;
    assert.deepEqual(col(phases, 'phase'), ['queue', 'prefill', 'decode']);
    assert.deepEqual(col(phases, 'durationMs'), [2800, 60, 240]);
    assert.deepEqual(col(phases, 'baselineMs'), [40, 55, null]);
    assert.deepEqual(col(phases, 'ratio'), [70, 60 / 55, null]);
    assert.deepEqual(col(phases, 'engine'), ['vLLM', 'vLLM', 'vLLM']);
    assert.deepEqual(col(phases, 'span'), ['llm-vllm · llm-vllm-1', 'llm-vllm · llm-vllm-1', 'llm-vllm · llm-vllm-1']);
    assert.equal(col(phases, 'source')[0], 'llm_request / gen_ai.latency.*');
  });

  test('two spans of one pod are told apart by their span id', () => {
    const two = [answer.llmPhases![0], { ...answer.llmPhases![0], spanId: '1111222233334444' }];
    const spans = new Set(phaseRows(two).map((r) => r.span));
    assert.deepEqual([...spans], ['llm-vllm · llm-vllm-1 (00f067aa)', 'llm-vllm · llm-vllm-1 (11112222)']);
  });

  test('the engine state: each figure with the metric it was read from; absent figures left out, never 0', () => {
    const rows = engineStateRows(answer.llmPhases!);
    assert.deepEqual(
      rows.map((r) => [r.figure, r.value, r.metric]),
      [
        ['Requests waiting', '37', 'vllm:num_requests_waiting'],
        ['Requests running', '32', 'vllm:num_requests_running'],
        ['KV-cache usage', '98 %', 'vllm:gpu_cache_usage_perc'],
        ['Preemptions', '12.0 /min', 'vllm:num_preemptions_total'],
        ['Prompt tokens', '640 (usually 600)', 'llm_request / gen_ai.latency.*'],
      ]
    );
    assert.ok(!rows.some((r) => r.figure === 'Prefix-cache hit rate'), 'not in the state: not shown');
    assert.equal(rows[0].instantMs, T0);
    assert.equal(rows[0].scrapeIntervalS, 15);
    const state = rcaFrames(answer, 'rca').find((f) => f.refId === 'rca:engineState')!;
    assert.equal(state.length, 5);
    // A TGI span has no engine state: its phases only.
    const tgi = { ...answer.llmPhases![0], engine: 'tgi' as const, engineState: undefined, promptTokens: undefined };
    assert.deepEqual(engineStateRows([tgi]), []);
    assert.equal(col(llmPhasesFrame([tgi], 'x'), 'engine')[0], 'TGI');
  });
});

const windowAnswer = RcaRangeAnswer.parse({
  ...answer,
  traceId: undefined,
  from: T0,
  to: T0 + 5 * 60_000,
  window: { traces: 120, spans: 1800, anomalousTraces: 31 },
  sample: {
    found: 400,
    analysed: 120,
    failed: 4,
    sampled: true,
    how: '120 of the 400 trace(s) the embedded store holds',
  },
  sources: [{ source: 'embedded', ok: true }],
});

describe('a window: Explain this window', () => {
  test('the same parts as one trace, and what the range answer read', () => {
    const frames = windowRcaFrames(windowAnswer, 'window');
    assert.deepEqual(
      frames.map((f) => f.refId),
      ['window', 'window:criticalPath', 'window:llmPhases', 'window:engineState']
    );
    assert.equal(rcaAboutOfFrame(frames[0])?.verdict, VERDICT);
    const w = windowAboutOfFrame(frames[0])!;
    assert.deepEqual([w.from, w.to, w.traces, w.anomalousTraces, w.sample.sampled], [T0, T0 + 300_000, 120, 31, true]);
    assert.equal(windowAboutOfFrame(rcaFrames(answer, 'rca')[0]), undefined);
  });

  test("its page has its own link with the window in it, and its export asks for the window's answer", () => {
    const href = appLinks.explain({ from: T0, to: T0 + 300_000 }, '?from=now-1h&to=now&var-backend=vllm&span=x');
    assert.equal(href, `/a/hopscope-rca-app/explain?from=${T0}&to=${T0 + 300_000}&var-backend=vllm`);
    assert.equal(exportParams('/a/hopscope-rca-app/explain', `?from=${T0}&to=${T0 + 1}`, T0, T0 + 1).window, 1);
    assert.equal(exportParams('/a/hopscope-rca-app/overview', '', T0, T0 + 1).window, undefined);
  });

  test("the postmortem's Markdown carries the window's verdict, ranked hops, LLM phases and what is missing", () => {
    const base = {
      range: { from: T0, to: T0 + 300_000 },
      generatedMs: T0,
      appUrl: 'https://grafana.example',
      traces: [],
      alerts: [],
    };
    const text = renderPostmortem({ ...base, window: windowAnswer });
    assert.match(text, /## Window root cause/);
    assert.match(
      text,
      new RegExp(
        `\\[Explain this window\\]\\(https://grafana\\.example/a/hopscope-rca-app/explain\\?from=${T0}&to=${T0 + 300_000}\\): 31 of 120`
      )
    );
    assert.match(text, /\*\*Verdict:\*\* llm-vllm-1 saturated: queued 2\.8 s/);
    assert.match(text, /\| 1 \| llm-vllm \| llm-vllm-1 \| llm\\_request \|/);
    assert.match(
      text,
      /LLM span llm-vllm \/ llm-vllm-1 \(vllm, .*\): queue 2800\.0 ms \(usually 40\.0\), prefill 60\.0 ms/
    );
    assert.match(text, /- prefix-cache hit rate: no vllm:prefix\\_cache\\_queries\\_total/);
    assert.match(
      renderPostmortem({ ...base, window: { error: 'tempo: 502' } }),
      /Window root cause unavailable: tempo: 502/
    );
    assert.doesNotMatch(renderPostmortem(base), /Window root cause/);
  });
});
