/**
 * Every answer knows its trace and says what the chain did: a W3C `traceresponse` header naming the gateway's server
 * span (errors and streams included, the header out before the first chunk), and the contract's ChainAnswerInfo — a
 * `hopscope` field, or a choice-less chunk before `data: [DONE]` that an OpenAI-style stream accumulator takes in its
 * stride. Documents are real corpus ids (graded here with the shipped dataset), a GPU OOM shows as a fallback model,
 * and the agent reports whether its task completed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ChainAnswerInfo, PromptLine, TRACERESPONSE_RE } from '../../../contract';
import { retrieve } from '../../../loadgen/src/chain/rag/corpus';
import { startChain, type RunningChain } from '../../../loadgen/src/chain/start';
import { SseParser } from '../../../loadgen/src/shared/sse';
import { waitFor } from './support';

const DATASET = join(import.meta.dirname, '../../../loadgen/scenarios/data/rag-questions.jsonl');

describe('chain answers: traceresponse and answer info', () => {
  let chain: RunningChain;
  const spans = new InMemorySpanExporter();
  const gatewaySpan = (traceId: string) =>
    spans
      .getFinishedSpans()
      .find(
        (s) =>
          s.spanContext().traceId === traceId &&
          s.kind === SpanKind.SERVER &&
          s.resource.attributes['service.name'] === 'gateway'
      );
  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${chain.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        model: 'hopscope-llama-8b-v1',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'How does the KV cache affect latency?' }],
        ...body,
      }),
    });
  const fault = async (b: Record<string, unknown>): Promise<string> =>
    (
      (await (
        await fetch(`${chain.controlUrl}/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(b),
        })
      ).json()) as { id: string }
    ).id;
  const unfault = (id: string) => fetch(`${chain.controlUrl}/faults/${id}`, { method: 'DELETE' });
  /** The traceresponse names the gateway's server span of that very request. */
  const checkTraceresponse = async (res: Response) => {
    const tr = res.headers.get('traceresponse');
    const m = TRACERESPONSE_RE.exec(tr ?? '');
    assert.ok(m, `traceresponse ${tr}`);
    const root = await waitFor('gateway span', async () => gatewaySpan(m[1]), 5000);
    assert.equal(root.spanContext().spanId, m[2], "the span id is the gateway's server span");
    assert.equal(Number.parseInt(m[3], 16) & 1, root.spanContext().traceFlags & 1, "the sampled flag is the span's");
    return root;
  };
  /** The stream's chunks, and one pass of an OpenAI-style accumulator (openai-node's ChatCompletionStream groups
   *  chunks by id, iterates `choices`, and copies other top-level fields onto its snapshot). */
  const readStream = async (res: Response) => {
    const parser = new SseParser();
    const datas: string[] = [];
    const reader = res.body!.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read())
      datas.push(...parser.push(Buffer.from(r.value).toString()));
    datas.push(...parser.flush());
    assert.equal(datas[datas.length - 1], '[DONE]');
    const chunks = datas.slice(0, -1).map(
      (d) =>
        JSON.parse(d) as {
          id: string;
          choices: Array<{ index: number; delta?: { content?: string } }>;
          [k: string]: unknown;
        }
    );
    const completions: Array<{ id: string; content: string; rest: Record<string, unknown> }> = [];
    for (const ch of chunks) {
      const { choices, ...rest } = ch;
      if (!completions.length || completions[completions.length - 1].id !== ch.id)
        completions.push({ id: ch.id, content: '', rest: {} });
      const cur = completions[completions.length - 1];
      Object.assign(cur.rest, rest);
      for (const choice of choices) cur.content += choice.delta?.content ?? '';
    }
    return { chunks, completions };
  };

  before(async () => {
    chain = await startChain({
      gatewayPort: 0,
      controlPort: 0,
      timeScale: 0.05,
      logLevel: 'silent',
      samplerAdaptive: false,
      otlpEndpoint: 'http://127.0.0.1:9/v1/traces',
      spanProcessors: [new SimpleSpanProcessor(spans)],
      hopTimeoutMs: 2000,
    });
  });
  after(async () => {
    await chain?.stop();
  });

  it('a RAG answer: traceresponse of its gateway span, info with the retrieved documents the rag hop returned', async () => {
    chain.settings.vectorCacheHitRate = 0;
    const res = await post({}, { 'x-hopscope-backend': 'vllm' });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { object: string; hopscope: unknown; choices: unknown[] };
    assert.equal(body.object, 'chat.completion');
    const info = ChainAnswerInfo.parse(body.hopscope);
    assert.deepEqual(
      { ...info, documents: undefined },
      {
        route: 'rag',
        backend: 'vllm',
        requestedModel: 'hopscope-llama-8b-v1',
        responseModel: 'hopscope-llama-8b-v1',
        documents: undefined,
      }
    );
    const root = await checkTraceresponse(res);
    const rag = spans
      .getFinishedSpans()
      .find(
        (s) =>
          s.spanContext().traceId === root.spanContext().traceId &&
          s.resource.attributes['service.name'] === 'rag' &&
          s.kind === SpanKind.SERVER
      )!;
    assert.deepEqual(info.documents, rag.attributes['hopscope.rag.document_ids']);
    assert.ok(
      info.documents.every((d) => /^doc-[a-z-]+-\d+$/.test(d)) && info.documents.length === chain.config.ragTopK
    );
    assert.ok(
      info.documents.some((d) => d.startsWith('doc-kv-cache-')),
      "documents about the question's topic"
    );
  });

  it('a stream: headers (traceresponse) before the first chunk; the info chunk last before [DONE], same id, no choices', async () => {
    const res = await post({ stream: true, stream_options: { include_usage: true } }, { 'x-hopscope-backend': 'tgi' });
    assert.equal(res.status, 200);
    assert.match(
      res.headers.get('traceresponse') ?? '',
      TRACERESPONSE_RE,
      'the header came with the head of the stream'
    );
    const { chunks, completions } = await readStream(res);
    const last = chunks[chunks.length - 1];
    assert.deepEqual(last.choices, []);
    const info = ChainAnswerInfo.parse(last.hopscope);
    assert.equal(info.backend, 'tgi');
    assert.equal(info.route, 'rag');
    assert.ok(chunks[chunks.length - 2].usage, 'the usage chunk (asked for) comes before it');
    assert.equal(chunks.filter((c) => c.hopscope).length, 1);
    assert.equal(completions.length, 1, 'one completion for an id-grouping client');
    assert.ok(completions[0].content.length > 0);
    await checkTraceresponse(res);
  });

  it('errors carry the traceresponse too: an unknown model (404) and an injected failure (502)', async () => {
    const nf = await post({ model: 'nope' });
    assert.equal(nf.status, 404);
    await checkTraceresponse(nf);
    const id = await fault({ target: 'embedding', kind: 'error' });
    const bad = await post({ stream: true });
    await unfault(id);
    assert.equal(bad.status, 502);
    const root = await checkTraceresponse(bad);
    assert.equal(root.status.code, 2, 'the trace the header names is the failed one');
  });

  it('gpu_oom: requestedModel and responseModel differ after the fallback, streaming and not', async () => {
    const id = await fault({ target: 'llm-vllm', kind: 'gpu_oom', magnitude: 1 });
    const plain = await post({}, { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' });
    const streamed = await post({ stream: true }, { 'x-hopscope-backend': 'vllm', 'x-hopscope-route': 'direct' });
    await unfault(id);
    if (plain.status === 200) {
      const info = ChainAnswerInfo.parse(((await plain.json()) as { hopscope: unknown }).hopscope);
      assert.deepEqual(
        [info.route, info.requestedModel, info.responseModel, info.documents],
        ['direct', 'hopscope-llama-8b-v1', 'hopscope-llama-1b', []]
      );
    }
    if (streamed.status === 200) {
      const { chunks } = await readStream(streamed);
      const info = ChainAnswerInfo.parse(chunks[chunks.length - 1].hopscope);
      assert.equal(info.responseModel, 'hopscope-llama-1b');
    }
    assert.ok(
      plain.status === 200 || streamed.status === 200,
      `the fallback model answered (statuses ${plain.status}, ${streamed.status})`
    );
  });

  it('the agent reports its task: completed, or failed when a tool call fails (the answer still comes)', async () => {
    const ok = await post(
      { messages: [{ role: 'user', content: 'agent answers: find the news' }] },
      { 'x-hopscope-route': 'agent' }
    );
    assert.equal(ok.status, 200);
    const done = ChainAnswerInfo.parse(((await ok.json()) as { hopscope: unknown }).hopscope);
    assert.equal(done.route, 'agent');
    assert.equal(done.agent?.task, 'completed');
    assert.ok(done.agent!.toolCalls >= 1 && done.agent!.steps === done.agent!.toolCalls + 2);
    const id = await fault({ target: 'tool', kind: 'error' });
    const failedPlain = await post(
      { messages: [{ role: 'user', content: 'agent answers: tool broken' }] },
      { 'x-hopscope-route': 'agent' }
    );
    const failedStream = await post(
      { stream: true, messages: [{ role: 'user', content: 'agent answers: tool broken, streamed' }] },
      { 'x-hopscope-route': 'agent' }
    );
    await unfault(id);
    assert.equal(failedPlain.status, 200);
    const failed = ChainAnswerInfo.parse(((await failedPlain.json()) as { hopscope: unknown }).hopscope);
    assert.deepEqual(failed.agent, { task: 'failed', toolCalls: 1, steps: 3 });
    const root = await checkTraceresponse(failedPlain);
    const agentSpan = spans
      .getFinishedSpans()
      .find(
        (s) =>
          s.spanContext().traceId === root.spanContext().traceId &&
          s.resource.attributes['service.name'] === 'agent' &&
          s.kind === SpanKind.SERVER
      )!;
    assert.equal(agentSpan.attributes['hopscope.agent.task'], 'failed');
    assert.ok(agentSpan.events.some((e) => e.name === 'agent.plan_aborted'));
    assert.equal(failedStream.status, 200);
    const { chunks } = await readStream(failedStream);
    assert.equal(ChainAnswerInfo.parse(chunks[chunks.length - 1].hopscope).agent?.task, 'failed');
  });

  it("baggage hopscope.scenario and hopscope.run_id land on every hop's server span", async () => {
    const res = await post({}, { baggage: 'hopscope.run_id=run-answers,hopscope.scenario=smoke%20test' });
    const root = await checkTraceresponse(res);
    const server = spans
      .getFinishedSpans()
      .filter((s) => s.spanContext().traceId === root.spanContext().traceId && s.kind === SpanKind.SERVER);
    assert.ok(server.length >= 4);
    for (const s of server) {
      assert.equal(s.attributes['hopscope.scenario'], 'smoke test', `${s.resource.attributes['service.name']}`);
      assert.equal(s.attributes['hopscope.run_id'], 'run-answers');
    }
  });

  it('the shipped RAG dataset grades the chain: answer documents against the expected ones give the recall rag reports', async () => {
    chain.settings.vectorCacheHitRate = 0.5;
    const lines = readFileSync(DATASET, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => PromptLine.parse(JSON.parse(l)));
    let sum = 0;
    for (const l of lines) {
      const res = await post({ messages: l.messages }, { 'x-hopscope-route': l.route! });
      assert.equal(res.status, 200);
      const info = ChainAnswerInfo.parse(((await res.json()) as { hopscope: unknown }).hopscope);
      const expected = l.expected!.documents!;
      const recall = info.documents.filter((d) => expected.includes(d)).length / expected.length;
      // What the chain retrieved (from rag or, on a hit, from the semantic cache) is what retrieval gives that query.
      assert.equal(recall, retrieve(l.messages![0].content, chain.config.ragTopK).recall, l.messages![0].content);
      sum += recall;
    }
    const mean = sum / lines.length;
    assert.ok(mean > 0.4 && mean < 0.95, `mean recall@${chain.config.ragTopK} over the dataset: ${mean}`);
    chain.settings.vectorCacheHitRate = chain.config.vectorCacheHitRate;
  });
});
