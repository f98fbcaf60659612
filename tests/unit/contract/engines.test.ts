/**
 * The engines' telemetry contract (contract/engines): request spans derived from each engine's source at a named
 * commit (tests/fixtures/engines/README.md) read into phases; TGI's Rust Duration text; the renamed-metric table.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  ENGINE_METRIC_ALIASES,
  currentMetricName,
  engineOfSpan,
  formatTgiDuration,
  llmPhasesOf,
  metricAliasesOf,
  parseTgiDuration,
  sglangRootSpanName,
  sglangThreadSpanName,
} from '../../../contract/engines/index';
import type { Span } from '../../../contract';

interface Fixture {
  source: string;
  span: Span;
  descendants?: Span[];
  expected: {
    engine: string;
    pod: string;
    promptTokens?: number;
    completionTokens?: number;
    phases: Array<{ name: string; durationMs: number; startMs: number }>;
    withoutSlices?: Array<{ name: string; durationMs: number; startMs: number }>;
  };
}
const fixture = (f: string): Fixture =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/engines', f), 'utf8')) as Fixture;

/** Equal within float error: 1e-6 ms, or 1 µs for epoch-ms instants (a double holds them to ~0.2 µs). */
const close = (actual: number | undefined, expected: number, what: string): void =>
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) < (Math.abs(expected) > 1e9 ? 1e-3 : 1e-6),
    `${what}: ${actual} ≠ ${expected}`
  );

for (const file of ['vllm-llm-request.json', 'tgi-chat-completions.json', 'sglang-request.json']) {
  test(`llmPhasesOf reads ${file} as its engine writes it`, () => {
    const f = fixture(file);
    assert.match(f.source, /@ [0-9a-f]{40}/, 'a fixture names the commit it derives from');
    const p = llmPhasesOf(f.span, f.descendants ?? []);
    assert.ok(p, 'a phase split');
    assert.equal(p.engine, f.expected.engine);
    assert.equal(p.pod, f.expected.pod);
    assert.equal(p.spanId, f.span.spanId);
    assert.equal(p.promptTokens, f.expected.promptTokens);
    assert.equal(p.completionTokens, f.expected.completionTokens);
    assert.deepEqual(
      p.phases.map((x) => x.name),
      f.expected.phases.map((x) => x.name)
    );
    f.expected.phases.forEach((e, i) => {
      close(p.phases[i].durationMs, e.durationMs, `${e.name} duration`);
      close(p.phases[i].startMs, e.startMs, `${e.name} start`);
    });
  });
}

test('SGLang without its prefill_waiting slice: prefill includes the queue, and the source says so', () => {
  const f = fixture('sglang-request.json');
  const p = llmPhasesOf(f.span);
  assert.ok(p);
  assert.match(p.source, /prefill includes the queue/);
  f.expected.withoutSlices!.forEach((e, i) => {
    assert.equal(p.phases[i].name, e.name);
    close(p.phases[i].durationMs, e.durationMs, `${e.name} duration`);
    close(p.phases[i].startMs, e.startMs, `${e.name} start`);
  });
});

test('the engine is decided by the span shape, not the service name', () => {
  const v = fixture('vllm-llm-request.json').span;
  const t = fixture('tgi-chat-completions.json').span;
  const s = fixture('sglang-request.json').span;
  assert.equal(engineOfSpan({ ...v, service: 'llm-tgi' }), 'vllm');
  assert.equal(engineOfSpan({ ...t, service: 'llm-vllm', name: 'generate_stream' }), 'tgi');
  assert.equal(engineOfSpan({ ...s, service: 'llm-vllm' }), 'sglang');
  // vLLM's attributes on another name still read as vLLM (a renamed span); SGLang's name without `module` but with rid.
  assert.equal(engineOfSpan({ ...v, name: 'POST /v1/chat/completions' }), 'vllm');
  const { module: _m, ...noModule } = s.attributes;
  assert.equal(engineOfSpan({ ...s, attributes: noModule }), 'sglang');
  // Not engine spans: a chain hop's `chat <model>` server span, a TGI span whose fields were never recorded (failed).
  assert.equal(llmPhasesOf({ ...v, name: 'chat llama', attributes: { 'gen_ai.operation.name': 'chat' } }), undefined);
  assert.equal(llmPhasesOf({ ...t, attributes: { parameters: 'x', seed: 'None' } }), undefined);
});

test('parseTgiDuration reads Rust Duration Debug text into ms', () => {
  const cases: Array<[unknown, number | undefined]> = [
    ['12.3ms', 12.3],
    ['850µs', 0.85],
    ['850μs', 0.85], // Greek mu
    ['850us', 0.85],
    ['1.2s', 1200],
    ['1.000000005s', 1000.000005],
    ['0ns', 0],
    ['250ns', 0.00025],
    ['3s', 3000],
    [7, 7],
    ['', undefined],
    ['12.3', undefined],
    ['1m', undefined],
    ['-5ms', undefined],
    ['Some(3)', undefined],
    [null, undefined],
  ];
  for (const [input, want] of cases) {
    const got = parseTgiDuration(input);
    if (want === undefined) assert.equal(got, undefined, String(input));
    else close(got, want, String(input));
  }
});

test('formatTgiDuration writes what Rust writes, and parses back', () => {
  // Rust: format!("{:?}", Duration::…) — from_millis(1500), new(0, 12_300_000), from_micros(850), ZERO,
  // from_nanos(1_000_001), new(1, 5), from_secs(2), from_nanos(999).
  const cases: Array<[number, string]> = [
    [1500, '1.5s'],
    [12.3, '12.3ms'],
    [0.85, '850µs'],
    [0, '0ns'],
    [1.000001, '1.000001ms'],
    [1000.000005, '1.000000005s'],
    [2000, '2s'],
    [0.000999, '999ns'],
  ];
  for (const [ms, text] of cases) {
    assert.equal(formatTgiDuration(ms), text);
    close(parseTgiDuration(text), ms, text);
  }
});

test('the alias table answers old and new names both ways, histogram suffixes carried', () => {
  const table: Array<[string, string[]]> = [
    ['vllm:gpu_cache_usage_perc', ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']],
    ['vllm:kv_cache_usage_perc', ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']],
    ['vllm:gpu_prefix_cache_hits_total', ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total']],
    ['vllm:prefix_cache_queries_total', ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total']],
    [
      'vllm:time_per_output_token_seconds_bucket',
      ['vllm:inter_token_latency_seconds_bucket', 'vllm:time_per_output_token_seconds_bucket'],
    ],
    ['vllm:num_requests_waiting', ['vllm:num_requests_waiting']],
    ['sglang:token_usage', ['sglang:token_usage']],
  ];
  for (const [name, group] of table) assert.deepEqual(metricAliasesOf(name), group, name);
  assert.equal(currentMetricName('vllm:time_per_output_token_seconds'), 'vllm:inter_token_latency_seconds');
  // Every group: distinct names, each engine's own prefix.
  for (const [engine, groups] of Object.entries(ENGINE_METRIC_ALIASES))
    for (const g of groups) {
      assert.equal(new Set(g.names).size, g.names.length);
      for (const n of g.names) assert.ok(n.startsWith(`${engine}:`), n);
    }
});

test('SGLang span names as trace.py builds them', () => {
  assert.equal(sglangRootSpanName('8c1e2f3a9b7d4c6e'), ' Req 8c1e2f3a');
  assert.equal(sglangRootSpanName('3_8c1e2f3a9b7d4c6e', 'prefill'), 'prefill Req 8c1e2f3a');
  assert.equal(
    sglangThreadSpanName('scheduler', 0, '0f1e2d3c4b5a6978', 4242),
    'scheduler [TP 0] (host:0f1e2d3c | pid:4242)'
  );
  assert.equal(sglangThreadSpanName('tokenizer', undefined, 'abc', 7), 'tokenizer(host:abc | pid:7)');
});
