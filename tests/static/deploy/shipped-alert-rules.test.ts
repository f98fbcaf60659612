/**
 * The composite alert rules Hopscope ships (contract/alert-rules.ts, seeded by the proxy and the app's editor example):
 * each passes the proxy's acceptance (`checkRuleSet`: schema, unique ids, a dry evaluation) and the app's editor
 * validation; every metric condition's PromQL parses (`promtool check rules`) and names only metrics the engines
 * expose (vLLM's fixture catalog; SGLang's collector, sgl-project/sglang@00ae9c1590d2); and the LLM rule's two
 * conditions, evaluated by Prometheus's own engine (`promtool test rules`) over series shaped as vLLM and SGLang
 * expose them, hold for an engine whose queue grows while its TTFT P99 passes the SLO, and for no healthy engine.
 * The scenario that exercises it (loadgen/scenarios/llm-queue-saturation.yaml) parses and drives vLLM past the SLO.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';

import { checkRuleSet } from '../../../backend-proxy/src/alerts/rules';
import { DEFAULT_RULES } from '../../../backend-proxy/src/alerts/manager';
import { DEFAULT_ALERT_RULES, LLM_QUEUE_TTFT_RULE, LLM_TTFT_SLO_S, type AlertCondition } from '../../../contract';
import { loadScenario } from '../../../loadgen/src/load/scenario';
import { validateRuleText } from '../../../src/transforms/alertRules';
import { readText, which } from './support';

type MetricCond = Extract<AlertCondition, { kind: 'metric' }>;
const metricConds = DEFAULT_ALERT_RULES.flatMap((r) =>
  r.conditions.filter((c): c is MetricCond => c.kind === 'metric').map((c) => ({ rule: r.id, c }))
);

/** Runs promtool with files written to a private temp dir; returns its output or throws with it. */
function promtool(files: Record<string, string>, args: (dir: string) => string[]): string {
  const dir = mkdtempSync(join(tmpdir(), `hopscope-rules-${process.pid}-`));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    try {
      return execFileSync('promtool', args(dir), { encoding: 'utf8', stdio: 'pipe', cwd: dir });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || 'promtool failed');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each metric condition as a Prometheus alerting rule: fires where the evaluator's comparison holds. */
const asAlerts = (conds: Array<{ rule: string; c: MetricCond }>): string =>
  stringify({
    groups: [
      {
        name: 'hopscope-shipped',
        rules: conds.map(({ rule, c }, i) => ({ alert: `${rule}_${i}`, expr: `(${c.expr}) ${c.op} ${c.threshold}` })),
      },
    ],
  });

describe('shipped alert rules', () => {
  it('are the ones the proxy seeds, accepted by the proxy and by the app editor', () => {
    assert.deepEqual(DEFAULT_RULES, [...DEFAULT_ALERT_RULES]);
    assert.deepEqual(checkRuleSet({ rules: DEFAULT_ALERT_RULES }, 'shipped'), [...DEFAULT_ALERT_RULES]);
    const ids = DEFAULT_ALERT_RULES.map((r) => r.id);
    for (const r of DEFAULT_ALERT_RULES) {
      const v = validateRuleText(
        JSON.stringify(r),
        ids.filter((id) => id !== r.id)
      );
      assert.ok(v.ok, `${r.id}: ${v.ok ? '' : v.problems.map((p) => p.text).join('; ')}`);
    }
    assert.ok(ids.includes('llm-queue-growing-ttft-slo'));
  });

  it('read only metric names the engines expose (vLLM catalog; SGLang collector)', () => {
    const vllm = readText('..', 'shared', 'fixtures', 'metrics', 'vllm', 'metrics-catalog.tsv');
    // SGLang: SchedulerMetricsCollector (num_queue_reqs) and TokenizerMetricsCollector (time_to_first_token_seconds).
    const sglang = new Set(['sglang:num_queue_reqs', 'sglang:time_to_first_token_seconds_bucket']);
    const names = new Set(metricConds.flatMap(({ c }) => c.expr.match(/\b(?:vllm|sglang):[a-z_]+/g) ?? []));
    assert.ok(names.size >= 4, [...names].join(', '));
    for (const n of names) {
      if (n.startsWith('sglang:')) assert.ok(sglang.has(n), `${n} is an SGLang metric`);
      else assert.ok(vllm.includes(n.replace(/_bucket$/, '')), `${n} in the vLLM catalog`);
    }
  });

  it('every metric expression parses (promtool check rules)', (t) => {
    if (!which('promtool')) return t.skip('promtool not installed (Debian package prometheus)');
    const out = promtool({ 'rules.yml': asAlerts(metricConds) }, () => ['check', 'rules', 'rules.yml']);
    assert.match(out, new RegExp(`SUCCESS: ${metricConds.length} rules found`));
  });

  it('the LLM rule holds for the engine whose queue grows while its TTFT P99 breaches the SLO, and only there', (t) => {
    if (!which('promtool')) return t.skip('promtool not installed (Debian package prometheus)');
    const conds = LLM_QUEUE_TTFT_RULE.conditions.map((c) => ({ rule: 'llm', c: c as MetricCond }));
    // 15 s scrapes for 5 minutes. vllm-0: one more waiting request per scrape (4/min), its first tokens mostly
    // between 1 and 2.5 s. vllm-1: nothing waiting, first tokens under 1 s. sglang-0: 10 waiting but flat (not
    // growing), first tokens fast. Labels as vLLM sets them (model_name, engine) plus Prometheus's instance.
    const vllm = (instance: string) => `instance="${instance}",model_name="hopscope-llama-8b-v1",engine="0"`;
    const bucket = (metric: string, labels: string, le: string, perScrape: number) => ({
      series: `${metric}_bucket{${labels},le="${le}"}`,
      values: `0+${perScrape}x20`,
    });
    const series = [
      { series: `vllm:num_requests_waiting{${vllm('vllm-0:8000')}}`, values: '0+1x20' },
      { series: `vllm:num_requests_waiting{${vllm('vllm-1:8000')}}`, values: '0x20' },
      { series: 'sglang:num_queue_reqs{instance="sglang-0:30000",model_name="m"}', values: '10x20' },
      bucket('vllm:time_to_first_token_seconds', vllm('vllm-0:8000'), '1', 1),
      bucket('vllm:time_to_first_token_seconds', vllm('vllm-0:8000'), '2.5', 10),
      bucket('vllm:time_to_first_token_seconds', vllm('vllm-0:8000'), '+Inf', 10),
      bucket('vllm:time_to_first_token_seconds', vllm('vllm-1:8000'), '1', 10),
      bucket('vllm:time_to_first_token_seconds', vllm('vllm-1:8000'), '+Inf', 10),
      bucket('sglang:time_to_first_token_seconds', 'instance="sglang-0:30000",model_name="m"', '0.5', 10),
      bucket('sglang:time_to_first_token_seconds', 'instance="sglang-0:30000",model_name="m"', '+Inf', 10),
    ];
    const tests = stringify({
      rule_files: ['rules.yml'],
      evaluation_interval: '15s',
      tests: [
        {
          interval: '15s',
          input_series: series,
          alert_rule_test: conds.map((_, i) => ({
            eval_time: '4m',
            alertname: `llm_${i}`,
            exp_alerts: [{ exp_labels: { instance: 'vllm-0:8000' } }],
          })),
        },
      ],
    });
    const out = promtool({ 'rules.yml': asAlerts(conds), 'tests.yml': tests }, () => ['test', 'rules', 'tests.yml']);
    assert.match(out, /SUCCESS/);
    assert.equal((LLM_QUEUE_TTFT_RULE.conditions[1] as MetricCond).threshold, LLM_TTFT_SLO_S);
  });

  it('the scenario that exercises it parses and drives vLLM alone past the rule’s TTFT SLO', () => {
    const s = loadScenario('llm-queue-saturation', {}).scenario;
    assert.equal(s.target.backend, 'vllm');
    assert.equal(s.slo.ttftMs, LLM_TTFT_SLO_S * 1000);
    assert.equal(s.load.profile, 'step');
    assert.ok(s.load.rps > (s.load.startRps ?? 0));
    assert.ok(s.thresholds.includes('ttft_p99_ms>1000'));
  });
});
