/**
 * `agent`: a multi-step plan — ask the LLM for a plan, call the `tool` hop (an external API, over TLS by default)
 * once or twice, then ask the LLM for the final answer (streamed back when the caller streams).
 */
import type { ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { Histogram } from 'prom-client';
import { HopError, sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { callChat, GenAiClientMetrics } from '../llm-call';
import { hashFraction } from '../util';

export const AGENT_NAME = 'hopscope-research-agent';

export function agentRoutes(env: HopEnv): Routes {
  const m = new GenAiClientMetrics(env.registry);
  const steps = new Histogram({ name: 'hopscope_agent_steps', help: 'Steps (LLM and tool calls) per agent run.', buckets: [1, 2, 3, 4, 5, 6, 8, 10], registers: [env.registry] });

  const run = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const b = req.body ?? {};
    const messages = Array.isArray(b.messages) ? b.messages : [];
    if (!messages.length) throw new HopError(400, 'validation', 'messages must be a non-empty array');
    const model = String(b.model ?? 'hopscope-llama-8b-v1');
    const backend = b.backend === 'tgi' ? 'tgi' : 'vllm';
    const question = String(messages[messages.length - 1]?.content ?? '');
    span.updateName(`invoke_agent ${AGENT_NAME}`);
    span.setAttributes({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': AGENT_NAME, 'gen_ai.request.model': model, 'gen_ai.provider.name': backend });

    const plan = await callChat(env.client, m, { backend, body: { model, max_tokens: 12, messages: [{ role: 'system', content: 'Plan the tool calls needed to answer.' }, ...messages] } });
    const toolCalls = 1 + (hashFraction(`tools:${question}`) < 0.4 ? 1 : 0);
    const results: string[] = [];
    for (let i = 0; i < toolCalls; i++) {
      const toolSpan = env.tracer.startSpan('execute_tool web_search', { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'web_search', 'gen_ai.tool.type': 'extension', 'gen_ai.tool.call.id': `call_${i}` } });
      try {
        const { data } = await context.with(trace.setSpan(context.active(), toolSpan), () => env.client.json('tool', '/v1/search', { q: `${question} (${i + 1})` }, { spanName: 'POST /v1/search' }));
        results.push(...(data.results ?? []).map((r: { snippet: string }) => r.snippet));
        toolSpan.end();
      } catch (err) {
        toolSpan.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        toolSpan.setAttribute('error.type', (err as HopError).errorType ?? 'error');
        toolSpan.end();
        throw err;
      }
    }
    steps.observe(2 + toolCalls);
    span.setAttribute('hopscope.agent.steps', 2 + toolCalls);
    const finalBody = {
      model,
      max_tokens: Number(b.max_tokens ?? 64),
      stream: b.stream === true,
      messages: [{ role: 'system', content: 'You are a research agent. Use the tool results.' }, { role: 'user', content: `Plan: ${plan.json?.choices?.[0]?.message?.content ?? ''}\nResults: ${results.join(' ')}` }, ...messages],
    };
    const out = await callChat(env.client, m, { backend, body: finalBody, relayTo: b.stream === true ? res : undefined, keepUsage: true });
    span.setAttributes({ 'gen_ai.usage.output_tokens': out.outputTokens, 'gen_ai.response.model': out.responseModel });
    if (b.stream === true) {
      res.end();
      return;
    }
    sendJson(res, 200, out.json);
  };
  return { 'POST /v1/agent/run': run };
}
