/**
 * `agent`: a multi-step plan — ask the LLM for a plan, call the `tool` hop (an external API, over TLS by default)
 * once or twice, then ask the LLM for the final answer (streamed back when the caller streams). A failed tool call
 * ends the plan there: the agent still answers with what it has, and reports the task as failed (its answer-info:
 * `hopscope.agent = {task, toolCalls, steps}`, a field of the JSON answer or a closing chunk of the stream). A plan made
 * by a model with `agentPlanFailure` (the light fall-back model) can name a tool call with invalid arguments: the plan
 * ends there, and the task fails. The answer's response model is the fall-back one when any step fell back.
 */
import type { ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { Counter, Histogram } from 'prom-client';
import { LLM_BACKENDS, type ChainAnswerInfo, type LlmBackend } from '../../../../contract/chain';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { callChat, GenAiClientMetrics } from '../llm-call';
import { endChatStream } from '../stream';
import { MODELS } from '../llm/models';
import { hashFraction } from '../../shared/random';

export const AGENT_NAME = 'hopscope-research-agent';

type AgentOutcome = NonNullable<ChainAnswerInfo['agent']>;

export function agentRoutes(env: HopEnv): Routes {
  const m = new GenAiClientMetrics(env.registry);
  const steps = new Histogram({
    name: 'hopscope_agent_steps',
    help: 'Steps (LLM and tool calls) per agent run.',
    buckets: [1, 2, 3, 4, 5, 6, 8, 10],
    registers: [env.registry],
  });
  const tasks = new Counter({
    name: 'hopscope_agent_tasks_total',
    help: 'Agent runs by task outcome (failed: a tool call failed, so the plan could not finish).',
    labelNames: ['task'],
    registers: [env.registry],
  });

  /** One tool call as its own step; a failure is recorded on its span and returned, not thrown. */
  const callTool = async (question: string, i: number): Promise<{ snippets: string[] } | { error: string }> => {
    const toolSpan = env.tracer.startSpan('execute_tool web_search', {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'web_search',
        'gen_ai.tool.type': 'extension',
        'gen_ai.tool.call.id': `call_${i}`,
      },
    });
    try {
      const { data } = await context.with(trace.setSpan(context.active(), toolSpan), () =>
        env.client.json('tool', '/v1/search', { q: `${question} (${i + 1})` }, { spanName: 'POST /v1/search' })
      );
      return { snippets: (data.results ?? []).map((r: { snippet: string }) => r.snippet) };
    } catch (err) {
      toolSpan.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      toolSpan.setAttribute('error.type', (err as HopError).errorType ?? 'error');
      return { error: (err as Error).message };
    } finally {
      toolSpan.end();
    }
  };

  const run = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const b = req.body ?? {};
    const messages = Array.isArray(b.messages) ? b.messages : [];
    if (!messages.length) throw new HopError(400, 'validation', 'messages must be a non-empty array');
    const model = String(b.model ?? 'hopscope-llama-8b-v1');
    const backend: LlmBackend = (LLM_BACKENDS as readonly unknown[]).includes(b.backend) ? b.backend : 'vllm';
    const question = String(messages[messages.length - 1]?.content ?? '');
    span.updateName(`invoke_agent ${AGENT_NAME}`);
    span.setAttributes({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': AGENT_NAME,
      'gen_ai.request.model': model,
      'gen_ai.provider.name': backend,
    });

    const plan = await callChat(env.client, m, {
      backend,
      body: {
        model,
        max_tokens: 12,
        messages: [{ role: 'system', content: 'Plan the tool calls needed to answer.' }, ...messages],
      },
    });
    const planned = 1 + (hashFraction(`tools:${question}`) < 0.4 ? 1 : 0);
    const results: string[] = [];
    let toolCalls = 0;
    let failure: string | undefined;
    let failureType = 'tool_failed';
    const planner = MODELS[plan.responseModel];
    if (planner?.agentPlanFailure && hashFraction(`plan:${planner.id}:${question}`) < planner.agentPlanFailure) {
      failure = `the plan from ${planner.id} called web_search with invalid arguments`;
      failureType = 'invalid_tool_call';
    }
    for (let i = 0; i < planned && !failure; i++) {
      toolCalls++;
      const r = await callTool(question, i);
      if ('error' in r) failure = r.error;
      else results.push(...r.snippets);
    }
    const outcome: AgentOutcome = { task: failure ? 'failed' : 'completed', toolCalls, steps: 2 + toolCalls };
    steps.observe(outcome.steps);
    tasks.inc({ task: outcome.task });
    span.setAttributes({
      'hopscope.agent.steps': outcome.steps,
      'hopscope.agent.tool_calls': toolCalls,
      'hopscope.agent.task': outcome.task,
    });
    if (failure)
      span.addEvent('agent.plan_aborted', {
        'error.type': failureType,
        'gen_ai.response.model': plan.responseModel,
        'exception.message': failure,
        'hopscope.agent.planned_tool_calls': planned,
      });
    const stream = b.stream === true;
    const finalBody = {
      model,
      max_tokens: Number(b.max_tokens ?? 64),
      stream,
      messages: [
        {
          role: 'system',
          content: failure
            ? 'You are a research agent. A tool failed: say what could not be done, and answer from what you have.'
            : 'You are a research agent. Use the tool results.',
        },
        {
          role: 'user',
          content: `Plan: ${plan.json?.choices?.[0]?.message?.content ?? ''}\nResults: ${results.join(' ')}${failure ? `\nTool error: ${failure}` : ''}`,
        },
        ...messages,
      ],
    };
    const out = await callChat(env.client, m, {
      backend,
      body: finalBody,
      relayTo: stream ? res : undefined,
      keepUsage: true,
    });
    // A request is on the fall-back path when any of its LLM steps was answered by another model than the one asked.
    const responseModel = [plan.responseModel, out.responseModel].find((x) => x !== model) ?? out.responseModel;
    span.setAttributes({ 'gen_ai.usage.output_tokens': out.outputTokens, 'gen_ai.response.model': responseModel });
    const info: Partial<ChainAnswerInfo> = { responseModel, agent: outcome };
    if (stream) endChatStream(res, out.stream ?? {}, info);
    else sendJson(res, 200, { ...out.json, hopscope: info });
  };
  return { 'POST /v1/agent/run': run };
}
