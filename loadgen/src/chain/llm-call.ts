/**
 * The client side of a chat call to an LLM hop, shared by the gateway and the agent: a GenAI CLIENT span
 * (`chat <model>`), streaming relayed to our caller (who ends the stream) or a JSON answer, and the gen_ai_client_*
 * metrics (duration and time to first chunk with trace exemplars: the client-side TTFT is the only one TGI has).
 */
import { LLM_HOP_OF, type LlmBackend } from '../../../contract/chain';
import type { ServerResponse } from 'node:http';
import { Histogram, type Registry } from 'prom-client';
import { observeWithExemplar, traceExemplar } from '../telemetry/exemplars';
import { HopError } from './errors';
import type { HopClient } from './client';
import { relayChatStream, type RelayStats } from './stream';

const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const TPOC_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];
const TTFC_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];

const L = [
  'gen_ai_operation_name',
  'gen_ai_provider_name',
  'gen_ai_request_model',
  'gen_ai_response_model',
  'error_type',
];

/** OpenTelemetry GenAI client metrics, named as the OTel → Prometheus translation names them (unit suffixes). */
export class GenAiClientMetrics {
  readonly duration: Histogram;
  readonly tokens: Histogram;
  readonly ttfc: Histogram;
  readonly tpoc: Histogram;
  constructor(registry: Registry) {
    const r = [registry];
    this.duration = new Histogram({
      name: 'gen_ai_client_operation_duration_seconds',
      help: 'GenAI operation duration.',
      labelNames: L,
      buckets: DURATION_BUCKETS,
      registers: r,
      enableExemplars: true,
    });
    this.tokens = new Histogram({
      name: 'gen_ai_client_token_usage',
      help: 'Number of input and output tokens used.',
      labelNames: [...L.filter((l) => l !== 'error_type'), 'gen_ai_token_type'],
      buckets: TOKEN_BUCKETS,
      registers: r,
    });
    this.ttfc = new Histogram({
      name: 'gen_ai_client_operation_time_to_first_chunk_seconds',
      help: 'Time to receive the first chunk in the response stream.',
      labelNames: L.filter((l) => l !== 'error_type'),
      buckets: TTFC_BUCKETS,
      registers: r,
      enableExemplars: true,
    });
    this.tpoc = new Histogram({
      name: 'gen_ai_client_operation_time_per_output_chunk_seconds',
      help: 'Time per output chunk, after the first one.',
      labelNames: L.filter((l) => l !== 'error_type'),
      buckets: TPOC_BUCKETS,
      registers: r,
    });
  }
}

export interface ChatCall {
  backend: LlmBackend;
  body: Record<string, unknown> & { model: string; stream?: boolean };
  /** When given and the call streams, the stream is relayed there. */
  relayTo?: ServerResponse;
  keepUsage?: boolean;
  pod?: string;
}

export interface ChatOutcome {
  json?: any;
  outputTokens: number;
  inputTokens: number;
  responseModel: string;
  pod: string;
  /** Streaming: the relayed stream's id/created/model and any answer-info chunk taken out of it (the caller ends it). */
  stream?: Pick<RelayStats, 'id' | 'created' | 'model' | 'info'>;
}

export async function callChat(client: HopClient, m: GenAiClientMetrics, call: ChatCall): Promise<ChatOutcome> {
  const hop = LLM_HOP_OF[call.backend];
  const stream = call.body.stream === true && !!call.relayTo;
  const t0 = performance.now();
  const labels = {
    gen_ai_operation_name: 'chat',
    gen_ai_provider_name: call.backend,
    gen_ai_request_model: call.body.model,
  };
  let up: Awaited<ReturnType<HopClient['call']>> | undefined;
  const fail = (type: string): void =>
    observeWithExemplar(
      m.duration,
      { ...labels, gen_ai_response_model: call.body.model, error_type: type },
      (performance.now() - t0) / 1000,
      traceExemplar(up?.span, true)
    );
  try {
    up = await client.call(
      hop,
      '/v1/chat/completions',
      { ...call.body, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) },
      { spanName: `chat ${call.body.model}`, pod: call.pod }
    );
  } catch (err) {
    fail((err as HopError).errorType ?? 'error');
    throw err;
  }
  up.span.setAttributes({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': call.backend,
    'gen_ai.request.model': call.body.model,
    'gen_ai.request.stream': stream,
  });
  if (up.status >= 400) {
    const data: any = await up.body.json().catch(() => ({}));
    const code = data?.error?.code ?? `http_${up.status}`;
    up.end();
    fail(code);
    throw new HopError(
      up.status >= 500 ? 502 : up.status,
      code,
      `${hop}: ${data?.error?.message ?? `HTTP ${up.status}`}`,
      code
    );
  }
  try {
    if (stream) {
      const s = await relayChatStream(up, call.relayTo!, call.keepUsage ?? false);
      const responseModel = s.model ?? call.body.model;
      const inTok = s.usage?.prompt_tokens ?? 0;
      const outTok = s.usage?.completion_tokens ?? s.contentChunks;
      up.span.setAttributes({
        'gen_ai.response.model': responseModel,
        'gen_ai.usage.input_tokens': inTok,
        'gen_ai.usage.output_tokens': outTok,
        ...(s.finishReason ? { 'gen_ai.response.finish_reasons': [s.finishReason] } : {}),
      });
      if (s.firstChunkMs) {
        up.span.setAttribute('gen_ai.response.time_to_first_chunk', (s.firstChunkMs - t0) / 1000);
        observeWithExemplar(
          m.ttfc,
          { ...labels, gen_ai_response_model: responseModel },
          (s.firstChunkMs - t0) / 1000,
          traceExemplar(up.span)
        );
      }
      for (let i = 1; i < s.chunkTimes.length; i++)
        m.tpoc.observe(
          { ...labels, gen_ai_response_model: responseModel },
          (s.chunkTimes[i] - s.chunkTimes[i - 1]) / 1000
        );
      if (!s.done) throw new HopError(502, 'stream_broken', `${hop} ended the stream early`, 'stream_broken');
      up.end();
      observeWithExemplar(
        m.duration,
        { ...labels, gen_ai_response_model: responseModel, error_type: '' },
        (performance.now() - t0) / 1000,
        traceExemplar(up.span)
      );
      m.tokens.observe({ ...labels, gen_ai_response_model: responseModel, gen_ai_token_type: 'input' }, inTok);
      m.tokens.observe({ ...labels, gen_ai_response_model: responseModel, gen_ai_token_type: 'output' }, outTok);
      return {
        outputTokens: outTok,
        inputTokens: inTok,
        responseModel,
        pod: up.pod,
        stream: { id: s.id, created: s.created, model: s.model, info: s.info },
      };
    }
    const json: any = await up.body.json();
    const responseModel = json.model ?? call.body.model;
    const inTok = json.usage?.prompt_tokens ?? 0;
    const outTok = json.usage?.completion_tokens ?? 0;
    up.span.setAttributes({
      'gen_ai.response.model': responseModel,
      'gen_ai.usage.input_tokens': inTok,
      'gen_ai.usage.output_tokens': outTok,
      'gen_ai.response.finish_reasons': [json.choices?.[0]?.finish_reason ?? 'unknown'],
    });
    up.end();
    observeWithExemplar(
      m.duration,
      { ...labels, gen_ai_response_model: responseModel, error_type: '' },
      (performance.now() - t0) / 1000,
      traceExemplar(up.span)
    );
    m.tokens.observe({ ...labels, gen_ai_response_model: responseModel, gen_ai_token_type: 'input' }, inTok);
    m.tokens.observe({ ...labels, gen_ai_response_model: responseModel, gen_ai_token_type: 'output' }, outTok);
    return { json, outputTokens: outTok, inputTokens: inTok, responseModel, pod: up.pod };
  } catch (err) {
    const e = err as Error;
    up.end(e);
    fail(
      err instanceof HopError
        ? err.errorType
        : e.name === 'TimeoutError' || e.name === 'AbortError'
          ? 'timeout'
          : 'stream_broken'
    );
    if (err instanceof HopError) throw err;
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      throw new HopError(504, 'upstream_timeout', `${hop} did not finish within the timeout`, 'timeout');
    throw new HopError(502, 'upstream_broken', `${hop}: ${e.message}`);
  }
}
