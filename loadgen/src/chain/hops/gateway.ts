/**
 * `gateway`: the OpenAI-compatible front door. POST /v1/chat/completions (SSE streaming or not) templates the
 * prompt and routes either to the agent or through embedding → vector-cache (→ rag on a miss) → an LLM backend;
 * GET /v1/models lists the model versions.
 *
 * Routing: header `x-hopscope-route: agent|rag|direct` (or body `metadata.route`); requests carrying `tools` go to the
 * agent. Backend: header `x-hopscope-backend: vllm|tgi|sglang` (or body `metadata.backend`), else an even split over the three.
 * Every answer carries the contract's ChainAnswerInfo (route, models, retrieved document ids, agent outcome): a
 * `hopscope` field, or a closing chunk before `data: [DONE]` when streaming.
 */
import type { ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import { HopError } from '../errors';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { callChat, GenAiClientMetrics } from '../llm-call';
import { LLM_BACKENDS, type ChainAnswerInfo, type LlmBackend } from '../../../../contract/chain';
import { endChatStream, relayChatStream } from '../stream';
import { DEFAULT_MODEL, MODEL_IDS, MODELS } from '../llm/models';
import { EMBED_MODEL } from './embedding';

export const SYSTEM_PROMPT =
  "You are Hopscope's assistant. Answer the user with the retrieved context; cite document ids; say when the context is not enough.";

export function gatewayRoutes(env: HopEnv): Routes {
  const m = new GenAiClientMetrics(env.registry);
  const routed = new Counter({
    name: 'hopscope_gateway_requests_total',
    help: 'Chat requests by route and backend.',
    labelNames: ['route', 'backend'],
    registers: [env.registry],
  });
  let split = 0;

  const chat = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const b = req.body;
    if (!b || typeof b !== 'object')
      throw new HopError(400, 'validation', 'expected a JSON body {model, messages, stream?, max_tokens?}');
    const model = String(b.model ?? DEFAULT_MODEL);
    if (!MODELS[model])
      throw new HopError(404, 'model_not_found', `unknown model ${model}; available: ${MODEL_IDS.join(', ')}`);
    const messages = b.messages;
    if (
      !Array.isArray(messages) ||
      !messages.length ||
      messages.some((x: any) => typeof x?.content !== 'string' || typeof x?.role !== 'string')
    ) {
      throw new HopError(400, 'validation', 'messages must be a non-empty array of {role, content} strings');
    }
    const hdr = (n: string) => {
      const v = req.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const routeAsked = hdr('x-hopscope-route') ?? b.metadata?.route;
    const route =
      routeAsked === 'agent' || routeAsked === 'direct' || routeAsked === 'rag'
        ? routeAsked
        : Array.isArray(b.tools) && b.tools.length
          ? 'agent'
          : 'rag';
    const backendAsked = hdr('x-hopscope-backend') ?? b.metadata?.backend;
    const backend: LlmBackend = (LLM_BACKENDS as readonly unknown[]).includes(backendAsked)
      ? (backendAsked as LlmBackend)
      : LLM_BACKENDS[split++ % LLM_BACKENDS.length];
    const stream = b.stream === true;
    const maxTokens = Math.max(1, Math.min(2048, Number(b.max_tokens ?? 64) | 0));
    span.setAttributes({
      'gen_ai.request.model': model,
      'gen_ai.request.max_tokens': maxTokens,
      'gen_ai.request.stream': stream,
      'hopscope.route': route,
      'hopscope.backend': backend,
      'gen_ai.conversation.id': String(b.metadata?.conversation_id ?? ''),
    });
    routed.inc({ route, backend });
    const keepUsage = b.stream_options?.include_usage === true;

    const info = (responseModel: string, extra: Partial<ChainAnswerInfo> = {}): ChainAnswerInfo => ({
      route,
      backend,
      requestedModel: model,
      responseModel,
      documents: [],
      ...extra,
    });
    /** The agent reports its outcome in its own answer-info (a `hopscope` field or chunk); the gateway completes it. */
    const agentInfo = (reported: unknown, fallbackModel: string): ChainAnswerInfo => {
      const r = (reported ?? {}) as Partial<ChainAnswerInfo>;
      span.setAttributes(
        r.agent ? { 'hopscope.agent.task': r.agent.task, 'hopscope.agent.tool_calls': r.agent.toolCalls } : {}
      );
      return info(
        typeof r.responseModel === 'string' ? r.responseModel : fallbackModel,
        r.agent ? { agent: r.agent } : {}
      );
    };

    if (route === 'agent') {
      const up = await env.client.call(
        'agent',
        '/v1/agent/run',
        { model, backend, messages, stream, max_tokens: maxTokens },
        { spanName: `invoke_agent` }
      );
      if (up.status >= 400) {
        const data: any = await up.body.json().catch(() => ({}));
        up.end();
        throw new HopError(
          up.status >= 500 ? 502 : up.status,
          data?.error?.code ?? 'agent_failed',
          `agent: ${data?.error?.message ?? up.status}`,
          data?.error?.code ?? 'agent_failed'
        );
      }
      try {
        if (stream) {
          const s = await relayChatStream(up, res, keepUsage);
          if (!s.done) throw new HopError(502, 'stream_broken', 'agent ended the stream early', 'stream_broken');
          up.end();
          const answer = agentInfo(s.info, s.model ?? model);
          span.setAttribute('gen_ai.response.model', answer.responseModel);
          endChatStream(res, s, answer);
        } else {
          const json = (await up.body.json()) as Record<string, unknown>;
          up.end();
          const answer = agentInfo(json.hopscope, typeof json.model === 'string' ? json.model : model);
          span.setAttribute('gen_ai.response.model', answer.responseModel);
          sendJson(res, 200, { ...json, hopscope: answer });
        }
      } catch (err) {
        up.end(err as Error);
        throw err;
      }
      return;
    }

    const lastUser =
      [...messages].reverse().find((x: any) => x.role === 'user')?.content ?? messages[messages.length - 1].content;
    let contextMsg = '';
    let documents: string[] = [];
    if (route === 'rag') {
      // The last turn (with the dialogue before it) is what gets embedded and retrieved for.
      const query =
        messages.length > 2
          ? `${messages
              .slice(-3)
              .map((x: any) => x.content)
              .join(' / ')}`
          : lastUser;
      await env.client.json(
        'embedding',
        '/v1/embeddings',
        { input: query, model: EMBED_MODEL },
        { spanName: `embeddings ${EMBED_MODEL}` }
      );
      const { data } = await env.client.json(
        'vector-cache',
        '/v1/lookup',
        { query, k: env.cfg.ragTopK },
        { spanName: 'POST /v1/lookup' }
      );
      span.setAttribute('hopscope.cache.hit', Boolean(data.hit));
      if (typeof data.recall === 'number') span.setAttribute('hopscope.rag.recall', data.recall);
      documents = (data.documents ?? []).map((d: { id: string }) => d.id);
      contextMsg = (data.documents ?? []).map((d: { id: string; text: string }) => `[${d.id}] ${d.text}`).join('\n');
    }
    const templated = [
      { role: 'system', content: SYSTEM_PROMPT },
      ...(contextMsg ? [{ role: 'system', content: `Context:\n${contextMsg}` }] : []),
      ...messages.filter((x: any) => x.role !== 'system'),
    ];
    const out = await callChat(env.client, m, {
      backend,
      body: { model, messages: templated, max_tokens: maxTokens, stream },
      relayTo: stream ? res : undefined,
      keepUsage,
    });
    span.setAttributes({
      'gen_ai.response.model': out.responseModel,
      'gen_ai.usage.input_tokens': out.inputTokens,
      'gen_ai.usage.output_tokens': out.outputTokens,
      'hopscope.llm.pod': out.pod,
    });
    const answer = info(out.responseModel, { documents });
    if (stream) endChatStream(res, out.stream ?? {}, answer);
    else sendJson(res, 200, { ...out.json, hopscope: answer });
  };

  const models = async (_r: HopRequest, res: ServerResponse): Promise<void> => {
    sendJson(res, 200, {
      object: 'list',
      data: MODEL_IDS.map((id) => ({ id, object: 'model', owned_by: 'hopscope', created: 0 })),
    });
  };
  return { 'POST /v1/chat/completions': chat, 'GET /v1/models': models };
}
