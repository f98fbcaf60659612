/**
 * Scenarios against the real chain (time scale 0.05): a GPU OOM on one backend, applied mid-run through the fault
 * API, shows as degraded requests on that backend only, with their trace ids; an interrupted run removes its
 * open-ended fault and is aborted; the shipped baselines run (agent task completion graded from the answers); a
 * dataset with expected document ids grades RAG recall exactly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ChainAnswerInfo } from '../../../contract/chain';
import { FaultAnnotation } from '../../../contract/faults';
import { RunRequest } from '../../../contract/runs';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { main } from '../../../loadgen/src/cli';
import { chat, otlpCollector } from './support';

describe('scenarios on the real chain', () => {
  let chain: RunningChain;
  let collector: Awaited<ReturnType<typeof otlpCollector>>;
  let dir: string;

  before(async () => {
    collector = await otlpCollector();
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      otlpEndpoint: collector.url,
      otlpProtocol: 'http/json',
      vectorCacheHitRate: 0,
      samplerAdaptive: false,
    });
    dir = mkdtempSync(join(tmpdir(), 'lg-scen-chain-'));
  });
  after(async () => {
    await chain?.stop();
    await collector?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (args: string[], signal?: AbortSignal) => {
    let out = '',
      err = '';
    const code = await main(
      [
        '--target',
        chain.gatewayUrl,
        '--control',
        chain.controlUrl,
        '--report',
        'none',
        '--metrics',
        'none',
        '--quiet',
        ...args,
      ],
      (s) => {
        out += s;
      },
      (s) => {
        err += s;
      },
      { env: {}, signal: signal ?? new AbortController().signal }
    );
    return { code, err, sum: out ? JSON.parse(out) : undefined };
  };
  const faults = async (): Promise<FaultAnnotation[]> =>
    FaultAnnotation.array().parse(await (await fetch(`${chain.controlUrl}/faults`)).json());

  it('chaos: GPU OOM on llm-tgi mid-run → degraded requests on tgi only, inside the fault window, each with its trace id', async () => {
    const file = join(dir, 'chaos-short.yaml');
    writeFileSync(
      file,
      [
        'description: a short chaos-gpu-oom',
        'target: { backend: mix }',
        'routes: { chat: 1, rag: 1 }',
        'request: { maxTokens: 12, timeout: 10s }',
        'load: { rps: 16, duration: 6s, arrivals: uniform }',
        'faults:',
        '  - { at: 1.5s, target: llm-tgi, kind: gpu_oom, magnitude: 1, for: 3s }',
        'thresholds: [ "degraded_rate>0.02" ]',
      ].join('\n')
    );
    const { code, err, sum } = await run(['--scenario', file]);
    assert.equal(code, 0, err);
    const [fault] = sum.faults;
    assert.ok(fault.id, `applied: ${JSON.stringify(fault)}`);
    assert.equal(fault.target, 'llm-tgi');
    assert.ok(sum.degraded > 0, `degraded ${sum.degraded}`);
    assert.equal(sum.succeeded + sum.degraded + sum.errors.total, sum.completed, 'degraded is neither ok nor an error');
    const degraded = (sum.failed as RunRequest[]).filter((r) => r.outcome === 'degraded');
    assert.equal(degraded.length, sum.degraded, 'every degraded request is kept (fewer than 100)');
    for (const r of degraded) {
      assert.equal(r.backend, 'tgi', 'vLLM traffic is untouched');
      assert.match(r.detail ?? '', /^fallback:hopscope-llama-8b-v[12]→hopscope-llama-1b$/);
      // In flight while the fault was on: it ended after the fault began (a request sent before it can still be
      // admitted during it, however long a busy machine kept it queued) and was sent before the fault was removed
      // (the driver's DELETE reaches the chain up to a busy machine's second after the scheduled end).
      assert.ok(
        r.startMs + r.e2eMs >= fault.startMs - 200 && r.startMs <= fault.startMs + fault.forS * 1000 + 1000,
        `${r.startMs} (+${r.e2eMs} ms) in [${fault.startMs}, +${fault.forS} s]`
      );
      assert.equal(r.traceIdSource, 'traceresponse');
      assert.match(r.traceId ?? '', /^[0-9a-f]{32}$/);
      // hopscope-load sent a sampled traceparent; the gateway's parent-based sampler kept the trace and says so.
      assert.equal(r.traceSampled, true, `${r.traceId} sampled`);
    }
    assert.equal(sum.untraced, 0, 'the gateway answers traceresponse on every request');
    // The fault ended by itself inside the run; nothing is left active.
    assert.ok((await faults()).every((f) => !f.active));
  });

  it('an interrupted run removes its open-ended fault, exits 130 and says aborted', async () => {
    const file = join(dir, 'open-fault.yaml');
    writeFileSync(
      file,
      'load: { rps: 5, duration: 30s }\nrequest: { maxTokens: 8 }\nfaults:\n  - { at: 0.5s, target: rag, kind: latency, magnitude: 20 }\n'
    );
    const ac = new AbortController();
    const active = setInterval(async () => {
      if ((await faults().catch(() => [])).some((f) => f.active && f.target === 'rag')) {
        clearInterval(active);
        setTimeout(() => ac.abort(), 300);
      }
    }, 100);
    const { code, err, sum } = await run(['--scenario', file], ac.signal);
    clearInterval(active);
    assert.equal(code, 130, err);
    assert.equal(sum.status, 'aborted');
    const [f] = sum.faults;
    assert.ok(f.id && f.endMs, JSON.stringify(f));
    const now = await faults();
    assert.equal(now.find((x) => x.id === f.id)?.active ?? false, false, 'removed at the end');
  });

  it('the shipped baselines run: single-turn-short passes, multi-hop-agent grades agent task completion, rag-recall grades recall', async () => {
    const short = await run(['--scenario', 'single-turn-short', '--duration', '2s', '--rps', '8']);
    assert.equal(short.code, 0, short.err);
    assert.equal(short.sum.scenario, 'single-turn-short');
    const routes = new Set(Object.keys(short.sum.byModel).map((k) => k.split('/')[2]));
    assert.deepEqual([...routes].sort(), ['chat', 'rag']);
    const agent = await run(['--scenario', 'multi-hop-agent', '--duration', '2s', '--rps', '4']);
    const q = agent.sum.quality.agentTaskCompletion;
    assert.equal(q.n, agent.sum.succeeded + agent.sum.degraded, 'every answered agent request reports its task');
    assert.ok(q.rate >= 0 && q.rate <= 1);
    const verdict = agent.sum.thresholds.find((t: { metric: string }) => t.metric === 'agent_task_completion');
    assert.equal(verdict.actual, q.rate);
    assert.equal(agent.code, agent.sum.thresholds.every((t: { pass: boolean }) => t.pass) ? 0 : 1);
    // rag-recall: the chain's 50 questions with their relevant documents.
    const rag = await run(['--scenario', 'rag-recall', '--duration', '2s', '--rps', '8']);
    const r = rag.sum.quality.ragRecall;
    assert.equal(r.n, rag.sum.succeeded + rag.sum.degraded, 'every answer graded');
    assert.ok(r.mean > 0 && r.mean <= 1, `recall ${r.mean}`);
  });

  it('a dataset with expected document ids: RAG recall graded from what the chain retrieved', async () => {
    const question = 'How does prefix caching affect time to first token?';
    const probe = await chat(
      chain.gatewayUrl,
      { messages: [{ role: 'user', content: question }], stream: false },
      { 'x-hopscope-route': 'rag' }
    );
    const docs = ChainAnswerInfo.parse(JSON.parse(probe.text).hopscope).documents;
    assert.ok(docs.length >= 1, 'the chain retrieved documents');
    writeFileSync(
      join(dir, 'recall.jsonl'),
      [
        // Half of what is expected is what the chain retrieves: recall 0.5 on every answer.
        JSON.stringify({
          prompt: question,
          route: 'rag',
          expected: { documents: [docs[0], 'doc-that-does-not-exist'] },
        }),
      ].join('\n')
    );
    writeFileSync(
      join(dir, 'recall.yaml'),
      'prompts: { kind: dataset, file: recall.jsonl }\nload: { rps: 6, duration: 1s, arrivals: uniform }\nrequest: { stream: false, maxTokens: 8 }\nthresholds: [ "rag_recall>=0.5" ]\n'
    );
    const { code, err, sum } = await run(['--scenario', join(dir, 'recall.yaml')]);
    assert.equal(code, 0, err);
    assert.equal(sum.quality.ragRecall.n, sum.succeeded + sum.degraded);
    assert.equal(sum.quality.ragRecall.mean, 0.5);
  });
});
