import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { GoldenAnswer, HeatmapAnswer } from '../../../contract';
import { EXAMPLE_RULE, describeCondition, validateRuleText } from '../../../src/transforms/alertRules';
import { exportFileName, exportParams } from '../../../src/transforms/exportParams';
import { seriesName } from '../../../src/datasource/frames/golden';
import { combineSeries, insightInput, meanAcross } from '../../../src/transforms/golden';
import { computeInsights } from '../../../src/transforms/insights';

const T = [0, 60_000, 120_000, 180_000];
const series = (
  metric: GoldenAnswer['series'][number]['metric'],
  backend: 'vllm' | 'tgi',
  values: Array<number | null>,
  labels: Record<string, string> = {}
) => ({
  metric,
  backend,
  labels,
  unit: 'x',
  origin: 'prometheus' as const,
  points: T.map((t, i) => [t, values[i]] as [number, number | null]),
});

const golden: GoldenAnswer = {
  from: 0,
  to: 180_000,
  stepMs: 60_000,
  missing: [],
  sources: [],
  series: [
    series('rps', 'vllm', [60, 70, 80, 90], { model_name: 'llama' }),
    series('rps', 'tgi', [50, 55, null, 40]),
    series('e2e_p99_s', 'vllm', [1, 1, 2.5, 2.4]),
    series('e2e_p99_s', 'tgi', [1.5, 3, null, 1]),
    series('output_tokens_per_s', 'vllm', [1000, 1000, 800, 820]),
  ],
};
const heat: HeatmapAnswer = {
  from: 0,
  to: 180_000,
  stepMs: 60_000,
  field: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
  granularity: 'gpu',
  times: T,
  sources: [],
  rows: [
    { gpu: '0', uuid: 'GPU-a', host: 'node-a', pod: 'llm-vllm-0', values: [0.5, 0.95, 0.99, 0.96] },
    { gpu: '1', mig: '1g.10gb', host: 'node-a', values: [0.5, 0.91, null, 0.9] },
  ],
};

test('golden series combine per instant (sum, max), and series are named by backend and labels', () => {
  assert.deepEqual(
    combineSeries(
      golden.series.filter((s) => s.metric === 'rps'),
      'sum'
    ).values,
    [110, 125, 80, 130]
  );
  assert.deepEqual(
    combineSeries(
      golden.series.filter((s) => s.metric === 'e2e_p99_s'),
      'max'
    ).values,
    [1.5, 3, 2.5, 2.4]
  );
  assert.deepEqual(combineSeries([], 'mean'), { times: [], values: [] });
  assert.equal(
    seriesName({ ...golden.series[0], origin: 'otel', labels: { model_name: 'm', engine: '0' } }),
    'vllm m engine=0 (client spans)'
  );
});

test('insights read the same data the panels draw: combined golden series and the GPUs mean activity', () => {
  const pick = (metric: GoldenAnswer['series'][number]['metric'], how: 'sum' | 'max') =>
    combineSeries(
      golden.series.filter((s) => s.metric === metric),
      how
    );
  const gpu = meanAcross(
    heat.times,
    heat.rows.map((r) => r.values)
  );
  assert.ok(Math.abs(gpu.values[1]! - 0.93) < 1e-9);
  assert.equal(gpu.values[2], 0.99);
  const input = insightInput(
    { rps: pick('rps', 'sum'), tokens: pick('output_tokens_per_s', 'sum'), p99: pick('e2e_p99_s', 'max'), gpu },
    60_000
  );
  assert.deepEqual(input.rps, [110, 125, 80, 130]);
  assert.equal(input.gpuActive[2], 0.99);
  const ids = computeInsights(input)
    .map((i) => i.id)
    .sort();
  // 125 rps at 93% (t=1) and 130 rps at 93% (t=3) → KV cache; p99 2.5 s with tokens 800 (-20%) at t=2 → pruning
  assert.deepEqual(ids, ['attention-head-pruning', 'kv-cache-preallocation']);
});

test('alert rule validation names every mistake, including the ones the schema cannot see', () => {
  assert.deepEqual(validateRuleText(JSON.stringify(EXAMPLE_RULE)), { ok: true, rule: EXAMPLE_RULE });
  const notJson = validateRuleText('{"id": ');
  assert.equal(notJson.ok, false);
  assert.match(!notJson.ok ? notJson.problems[0].message : '', /Not valid JSON/);
  const bad = validateRuleText(
    JSON.stringify({
      ...EXAMPLE_RULE,
      id: 'has space',
      severity: 'huge',
      conditions: [{ kind: 'metric', expr: 'up', op: '!=', threshold: 'x' }],
    })
  );
  assert.equal(bad.ok, false);
  const paths = !bad.ok ? bad.problems.map((p) => p.path).sort() : [];
  assert.deepEqual(paths, ['conditions[0].op', 'conditions[0].threshold', 'id', 'severity']);
  const semantic = validateRuleText(
    JSON.stringify({ ...EXAMPLE_RULE, withinMs: 120_000, conditions: [{ kind: 'kernel', type: 'gpu_alloc_fail' }] }),
    [EXAMPLE_RULE.id]
  );
  const messages = !semantic.ok ? semantic.problems.map((p) => p.message).join('\n') : '';
  assert.match(messages, /needs "consecutive"/);
  assert.match(messages, /already has the id/);
  assert.match(messages, /cannot be longer than the lookback/);
  assert.equal(describeCondition(EXAMPLE_RULE.conditions[0]), '3 consecutive tls_handshake > 500 ms on one pod');
  assert.equal(describeCondition({ kind: 'metric', expr: 'up', op: '<', threshold: 1 }), 'up < 1');
});

test('export asks for the view with an absolute time range, and names files by view and time', () => {
  const id = 'ab'.repeat(16);
  const p = exportParams(
    `/a/hopscope-rca-app/traces/${id}`,
    '?from=now-15m&to=now&span=abc',
    1_700_000_000_000,
    1_700_000_900_000
  );
  assert.equal(p.traceId, id);
  assert.equal(p.view, `/a/hopscope-rca-app/traces/${id}?from=1700000000000&to=1700000900000&span=abc`);
  const pod = exportParams('/a/hopscope-rca-app/services/rag/pods/rag-0', '', 1, 2);
  assert.deepEqual([pod.service, pod.pod, pod.traceId], ['rag', 'rag-0', undefined]);
  assert.equal(
    exportFileName(pod.view, Date.UTC(2026, 10, 30, 3, 20), 'md'),
    'hopscope-services-rag-pods-rag-0-2026-11-30T03-20.md'
  );
  assert.equal(exportFileName('/a/hopscope-rca-app/?x=1', 0, 'png'), 'hopscope-overview-1970-01-01T00-00.png');
});
