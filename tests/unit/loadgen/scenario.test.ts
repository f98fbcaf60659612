/**
 * Scenario files: the shipped ones are valid and say what they are for; a bad file is refused with the field and its
 * line:column (YAML and JSON); flags override fields and are validated by the same schema; datasets are read
 * relative to the scenario, bad lines named by line number.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PromptLine, Scenario } from '../../../contract/scenario';
import { parseCli, type CliPlan } from '../../../loadgen/src/cli';
import { parseDataset } from '../../../loadgen/src/load/dataset';
import { UsageError } from '../../../loadgen/src/load/errors';
import { listScenarios, loadScenario, parseScenario } from '../../../loadgen/src/load/scenario';

const dir = mkdtempSync(join(tmpdir(), 'lg-scen-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
/** 1-based line of the first line containing `needle`. */
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
const usage = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof UsageError, `a UsageError, not ${(e as Error).stack}`);
    return e.message;
  }
  assert.fail('expected a UsageError');
};
const plan = (argv: string[]): CliPlan => parseCli([...argv, '--report', 'none', '--metrics', 'none'], {}) as CliPlan;

describe('shipped scenarios', () => {
  it('are all valid, and include the seed baselines, the chaos run and the demo load', () => {
    const names = listScenarios({});
    for (const n of ['single-turn-short', 'multi-hop-agent', 'chaos-gpu-oom', 'demo-steady'])
      assert.ok(names.includes(n), `${n} in ${names}`);
    for (const n of names) {
      const s = loadScenario(n, {});
      assert.equal(s.name, n);
      assert.ok(s.scenario.description, `${n} has a description`);
    }
  });

  it('say what they are: short single-turn, agent-only, GPU OOM on one backend mid-run, a long steady 4 req/s', () => {
    const short = loadScenario('single-turn-short', {}).scenario;
    assert.equal(short.prompts.kind === 'synth' && short.prompts.multiTurnP, 0);
    assert.ok(short.prompts.kind === 'synth' && short.prompts.maxContextTokens <= 500);
    assert.equal(short.routes.agent, 0);
    const agent = loadScenario('multi-hop-agent', {}).scenario;
    assert.ok(agent.routes.agent > 0 && agent.routes.chat === 0 && agent.routes.rag === 0);
    assert.ok(agent.thresholds.some((t) => t.startsWith('agent_task_completion')));
    const chaos = loadScenario('chaos-gpu-oom', {}).scenario;
    assert.equal(chaos.faults.length, 1);
    const [f] = chaos.faults;
    assert.equal(f.kind, 'gpu_oom');
    assert.ok(['llm-tgi', 'llm-vllm'].includes(f.target));
    assert.ok(f.at > 0 && f.at + (f.for ?? 0) < chaos.load.duration, 'the fault starts and ends inside the run');
    assert.ok(
      chaos.thresholds.some((t) => t.startsWith('degraded_rate>')),
      'the fallback must be seen'
    );
    const demo = loadScenario('demo-steady', {}).scenario;
    assert.equal(demo.load.rps, 4);
    assert.ok(demo.load.duration >= 3600);
  });

  it('an unknown name lists the known ones', () => {
    const msg = usage(() => loadScenario('no-such-scenario', {}));
    assert.match(msg, /unknown scenario "no-such-scenario"; available: .*single-turn-short/);
    assert.match(
      usage(() => loadScenario(join(dir, 'missing.yaml'), {})),
      /not found/
    );
  });
});

describe('scenario validation', () => {
  it('fills every default from an almost empty file, with durations as strings or seconds', () => {
    const s = parseScenario('load: { rps: 3, duration: 2m }\nrequest: { timeout: 1500ms }\n', 'x.yaml');
    assert.equal(s.load.duration, 120);
    assert.equal(s.request.timeout, 1.5);
    assert.equal(s.load.rps, 3);
    assert.equal(s.target.url, 'http://127.0.0.1:3310');
    assert.equal(s.prompts.kind, 'synth');
    assert.deepEqual(s.faults, []);
    assert.equal(parseScenario('load: { duration: 45 }\n', 'x.yaml').load.duration, 45);
    assert.deepEqual(Scenario.parse({}).routes, { chat: 0, rag: 0.9, agent: 0.1 });
  });

  it('a bad YAML file: every problem with its file, line, column and field', () => {
    const text = [
      'description: broken on purpose',
      'load:',
      '  profile: ramp',
      '  rps: -3',
      '  rsp: 4',
      'faults:',
      '  - at: 10s',
      '    target: llm-tgx',
      '    kind: gpu_oom',
      'thresholds:',
      '  - p98_ms<3',
    ].join('\n');
    const file = write('bad.yaml', text);
    const msg = usage(() => parseScenario(text, file));
    assert.ok(msg.includes(`${file}:${lineOf(text, 'rps: -3')}:8: load.rps: a rate must be > 0`), msg);
    assert.ok(msg.includes(`${file}:${lineOf(text, 'rsp:')}:3: load.rsp: unknown field "rsp"`), msg);
    // A missing field is shown at the object that lacks it.
    assert.ok(
      msg.includes(`${file}:${lineOf(text, 'load:')}:1: load.startRps: startRps is required for the ramp profile`),
      msg
    );
    assert.ok(msg.includes(`${file}:${lineOf(text, 'target: llm-tgx')}:13: faults[0].target:`), msg);
    assert.ok(msg.includes(`${file}:${lineOf(text, 'p98_ms')}:5: thresholds[0]: unknown metric p98_ms`), msg);
  });

  it('a bad JSON file: the same, at the JSON line', () => {
    const text = JSON.stringify({ load: { rps: 5, duration: 'soon' }, models: { m: -1 } }, null, 2);
    const msg = usage(() => parseScenario(text, 'bad.json'));
    assert.ok(msg.includes(`bad.json:${lineOf(text, '"duration"')}:`), msg);
    assert.match(msg, /load\.duration: expected a duration like 500ms/);
    assert.ok(
      msg.includes(`bad.json:${lineOf(text, '"m": -1')}:`) && /models\.m: a weight cannot be negative/.test(msg),
      msg
    );
  });

  it('a file that is not YAML at all, or empty, is refused with its line', () => {
    const text = 'load:\n  rps: [1\n';
    assert.match(
      usage(() => parseScenario(text, 'syntax.yaml')),
      /syntax\.yaml:\d+:\d+: .*(indented|flow|\])/i
    );
    assert.match(
      usage(() => parseScenario('', 'empty.yaml')),
      /empty/
    );
    assert.match(
      usage(() => parseScenario('a: 1\na: 2\n', 'dup.yaml')),
      /dup\.yaml:2:1: .*unique/i
    );
  });

  it('a fault outside the run, and a spike outside the run, are refused at their field', () => {
    const text = 'load:\n  duration: 30s\nfaults:\n  - { at: 45s, target: rag, kind: latency, magnitude: 100 }\n';
    assert.ok(usage(() => parseScenario(text, 'f.yaml')).includes(`f.yaml:${lineOf(text, 'at: 45s')}:`));
    assert.match(
      usage(() =>
        parseScenario('load: { profile: spike, duration: 10s, spikeRps: 9, spikeAt: 20s, spikeFor: 1s }\n', 's.yaml')
      ),
      /load\.spikeAt: the spike/
    );
  });
});

describe('flags over a scenario', () => {
  it("a flag beats the field; the other fields stay the scenario's", () => {
    const p = plan(['--scenario', 'single-turn-short', '--rps', '20', '--model', 'a=3,b=1', '--routes', 'agent=1']);
    const s = loadScenario('single-turn-short', {}).scenario;
    assert.equal(p.load.profile.rps, 20);
    assert.equal(p.load.profile.durationS, s.load.duration);
    assert.equal(p.load.maxTokens, s.request.maxTokens);
    assert.deepEqual(p.load.modelWeights, { a: 3, b: 1 });
    assert.deepEqual(p.load.routes, { chat: 0, rag: 0, agent: 1 });
    assert.equal(p.scenario.name, 'single-turn-short');
    assert.ok(p.load.runId.startsWith('single-turn-short-'));
    // Thresholds: the scenario's, plus the flag's.
    const q = plan(['--scenario', 'single-turn-short', '--threshold', 'rps>1']);
    assert.equal(q.thresholds.length, s.thresholds.length + 1);
  });

  it('--agent-ratio keeps the other routes in proportion', () => {
    const p = plan(['--scenario', 'single-turn-short', '--agent-ratio', '0.5']);
    assert.ok(
      Math.abs(p.load.routes!.chat - 0.25) < 1e-9 &&
        Math.abs(p.load.routes!.rag - 0.25) < 1e-9 &&
        p.load.routes!.agent === 0.5
    );
  });

  it('flags that break the scenario are refused by the same schema', () => {
    assert.match(
      usage(() => plan(['--scenario', 'chaos-gpu-oom', '--duration', '10s'])),
      /faults\[0\]\.at: at 20 s is not inside the run \(duration 10 s\)/
    );
    assert.match(
      usage(() => plan(['--scenario', 'chaos-gpu-oom', '--control', 'none'])),
      /no fault API/
    );
    assert.equal(plan(['--scenario', 'chaos-gpu-oom', '--duration', '10s', '--no-faults']).faults.length, 0);
    assert.match(
      usage(() => plan(['--scenario', 'chaos-gpu-oom', '--control', 'ftp://x'])),
      /target\.control/
    );
    assert.match(
      usage(() => plan(['--routes', 'chat=1,search=2'])),
      /unknown "search"/
    );
    assert.match(
      usage(() => plan(['--run-id', 'bad id'])),
      /run id is 1–128/
    );
    assert.match(
      usage(() => plan(['--max-regression', 'p99_ms:+10%'])),
      /needs --baseline-run/
    );
    assert.match(
      usage(() => plan(['--baseline-run', 'r1'])),
      /needs --max-regression/
    );
    assert.match(
      usage(() => plan(['--baseline-run', 'r1', '--max-regression', 'p99:+10%'])),
      /unknown regression metric p99/
    );
    assert.match(
      usage(() => parseCli(['--metrics', 'otlp'], {})),
      /OTEL_EXPORTER_OTLP_ENDPOINT/
    );
    assert.match(
      usage(() => parseCli(['--metrics', 'statsd'], {})),
      /none, otlp or prometheus/
    );
    assert.match(
      usage(() => parseCli(['--join', '--report', 'none'], {})),
      /needs --report URL/
    );
  });

  it('the proxy URL: --report, else $HOPSCOPE_PROXY_URL, else the demo proxy; none turns it off', () => {
    assert.equal((parseCli([], {}) as CliPlan).report?.url, 'http://127.0.0.1:3301');
    assert.equal((parseCli([], { HOPSCOPE_PROXY_URL: 'http://proxy:9/' }) as CliPlan).report?.url, 'http://proxy:9');
    assert.equal((parseCli(['--report', 'http://p:1'], { HOPSCOPE_PROXY_TOKEN: 't' }) as CliPlan).report?.token, 't');
    assert.equal((parseCli(['--report', 'none'], {}) as CliPlan).report, null);
    assert.equal((parseCli([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }) as CliPlan).metrics.mode, 'otlp');
    assert.equal((parseCli([], {}) as CliPlan).metrics.mode, 'prometheus');
  });
});

describe('prompt datasets', () => {
  it("a scenario's dataset is read relative to the scenario file", () => {
    writeFileSync(
      join(dir, 'qs.jsonl'),
      [
        JSON.stringify({
          prompt: 'What is prefix caching?',
          route: 'rag',
          expected: { documents: ['doc-1', 'doc-7'] },
        }),
        '',
        JSON.stringify({
          messages: [{ role: 'user', content: 'Plan a trip' }],
          route: 'agent',
          model: 'hopscope-llama-8b-v2',
          expected: { task: 'completed' },
        }),
      ].join('\n')
    );
    const file = write('with-data.yaml', 'prompts: { kind: dataset, file: qs.jsonl, order: shuffle }\n');
    const p = plan(['--scenario', file]);
    assert.equal(p.load.prompts?.kind, 'dataset');
    if (p.load.prompts?.kind !== 'dataset') return;
    assert.equal(p.load.prompts.lines.length, 2);
    assert.equal(p.load.prompts.order, 'shuffle');
    assert.deepEqual(p.load.prompts.lines[0].expected?.documents, ['doc-1', 'doc-7']);
  });

  it('bad lines are named by line number and field; a missing file is a clear error', () => {
    const text = [
      JSON.stringify({ prompt: 'ok' }),
      '{not json',
      JSON.stringify({ prompt: 'x', messages: [{ role: 'user', content: 'y' }] }),
      JSON.stringify({ prompt: 'z', route: 'search' }),
      JSON.stringify({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
      }),
    ].join('\n');
    const msg = usage(() => parseDataset(text, 'd.jsonl'));
    assert.match(msg, /d\.jsonl:2: not JSON/);
    assert.match(msg, /d\.jsonl:3: .*either messages or prompt/);
    assert.match(msg, /d\.jsonl:4: route: /);
    assert.match(msg, /d\.jsonl:5: messages: the last message must be the user's/);
    assert.doesNotMatch(msg, /d\.jsonl:1:/);
    assert.match(
      usage(() => plan(['--prompts', join(dir, 'nope.jsonl')])),
      /cannot read prompt dataset .*no such file/
    );
    assert.match(
      usage(() => parseDataset('\n\n', 'e.jsonl')),
      /no prompts/
    );
  });

  it('the line schema: messages or prompt, route, model, expected documents or task', () => {
    assert.ok(
      PromptLine.safeParse({
        prompt: 'q',
        route: 'chat',
        model: 'm',
        expected: { documents: ['a'], task: 'completed' },
      }).success
    );
    assert.ok(!PromptLine.safeParse({}).success);
    assert.ok(!PromptLine.safeParse({ prompt: 'q', expected: { task: 'failed' } }).success);
    assert.ok(!PromptLine.safeParse({ prompt: 'q', extra: 1 }).success);
  });
});
