/**
 * `llm-vllm` / `llm-tgi` / `llm-sglang`: an OpenAI-compatible /v1/chat/completions (streaming and not) served by the
 * simulated continuous-batching engine, with the backend's own /metrics (vLLM, TGI or SGLang names), GenAI span
 * attributes, and the engine's own request span(s) as the real engine writes them (llm/engine-spans.ts).
 * gpu_oom: the allocation fails at admission; the hop falls back once to the lighter model and records it on the span.
 * Each replica's KV allocations go through its own CUDA driver process and the stand-in libcuda.so.1 (gpu/cuda-driver.ts),
 * so a kernel probe sees each failing cuMemAlloc_v2 on this replica's pod.
 * HOPSCOPE_TP ≥ 2: the replica is a tensor-parallel group (gpu/tp-group.ts), one rank process per rank making each
 * step's ncclAllReduce through the stand-in libnccl.so.2; nccl_timeout stalls one rank's collective, every request on
 * the group hangs until the watchdog, then fails as vLLM's do (EngineDeadError, HTTP 500) and the group restarts.
 * gpu_memory_leak: the replica's driver process allocates `magnitude` MiB/s more (real cuMemAlloc_v2 calls), never freed
 * while the fault lasts; the engine's usable KV cache shrinks by what is held, then allocations fail (GPU OOM) and the
 * hop falls back as for gpu_oom. When the fault ends the leaked memory is freed (cuMemFree_v2), as a restart would.
 * TGI's /metrics stays in the Prometheus text format (its exporter has no OpenMetrics, and OpenMetrics would add `_total`
 * to its counters); vLLM's negotiates OpenMetrics and carries trace exemplars.
 */
import type { ServerResponse } from 'node:http';
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import { EngineError, engineOptionsFor, InferenceEngine, type SeqResult } from '../llm/engine';
import { MODELS, MODEL_IDS, type ModelSpec } from '../llm/models';
import { tgiMetrics } from '../llm/metrics-tgi';
import { sglangMetrics } from '../llm/metrics-sglang';
import { recordEngineSpans } from '../llm/engine-spans';
import { llmBackendOfHop, type LlmBackend } from '../../../../contract/chain';
import { vllmMetrics, type LlmMetrics } from '../llm/metrics-vllm';
import { traceExemplar } from '../../telemetry/exemplars';
import { HopError } from '../errors';
import { CudaDriver } from '../gpu/cuda-driver';
import { NcclRankProcess, SimulatedNcclRank } from '../gpu/nccl-rank';
import { ensureNcclStandIn } from '../gpu/nccl-stand-in';
import { NcclTimeoutError, TpGroup } from '../gpu/tp-group';
import { registerWithExporter } from '../registration';
import { sendJson, type HopEnv, type HopRequest, type Routes } from '../hop-server';
import { hashFraction } from '../../shared/random';
import { countTokens, fillerText } from '../../shared/text';

export interface ChatMessage {
  role: string;
  content: string;
}

/** Elements one rank all-reduces per sequence in a step: the hidden size of the 8B model (Llama 3 8B: 4096). */
const HIDDEN_SIZE = 4096;
/** A group's restart after a watchdog timeout (pods recreated, weights loaded), simulated ms before the time scale. */
const GROUP_RESTART_MS = 30_000;

export interface LlmHop {
  routes: Routes;
  engine: InferenceEngine;
  backend: LlmBackend;
  /** The tensor-parallel group serving this replica (HOPSCOPE_TP ≥ 2). */
  readonly group?: TpGroup;
  /** pid of this replica's CUDA driver process (absent when the stand-in could not be built). */
  readonly gpuDriverPid?: number;
  stop(): void;
}

export function createLlmHop(env: HopEnv): LlmHop {
  const backend: LlmBackend = llmBackendOfHop(env.replica.hop) ?? 'vllm';
  const { faults, replica } = env;
  // TGI's exporter speaks only the text format; vLLM's and SGLang's prometheus_client negotiates OpenMetrics.
  env.openMetrics = backend !== 'tgi';
  const driver = env.cudaStandIn ? CudaDriver.start(env.cudaStandIn, env.log) : undefined;
  const group = env.cfg.tensorParallel > 1 ? startGroup(env) : undefined;
  const engine = new InferenceEngine({
    ...engineOptionsFor(backend, { maxNumSeqs: env.cfg.llmMaxNumSeqs, numGpuBlocks: env.cfg.llmNumGpuBlocks }),
    scale: env.scale,
    rand: env.rand,
    kvFactor: () => faults.active(replica.hop, replica.pod, 'kv_cache_thrash')?.magnitude ?? 1,
    oomProbability: (m: ModelSpec) => {
      const f = faults.active(replica.hop, replica.pod, 'gpu_oom');
      return f ? f.magnitude * (m.fallback ? 1 : 0.15) : 0;
    },
    gpuAlloc: driver ? (bytes, fail) => driver.alloc(bytes, fail) : undefined,
    collective: group ? (seqs) => group.allReduce(seqs * HIDDEN_SIZE) : undefined,
  });
  const leak = startLeak(env, engine, driver);
  const metrics: LlmMetrics =
    backend === 'vllm'
      ? vllmMetrics(env.registry, engine, MODEL_IDS[0], env.cfg.vllmMetricNames)
      : backend === 'sglang'
        ? sglangMetrics(env.registry, engine, MODEL_IDS[0])
        : tgiMetrics(env.registry, engine);
  // An injected `error` fails the request before it reaches the engine; the server still counts it as failed.
  env.onInjectedError = (body) => {
    const asked = (body as { model?: unknown } | undefined)?.model;
    metrics.onFailure(typeof asked === 'string' && MODELS[asked] ? asked : MODEL_IDS[0], 'injected_error');
  };
  // Not hopscope_gpu_alloc_failures_total: that is the bpf-exporter's kernel-side count of failed CUDA allocations.
  const oomCounter = new Counter({
    name: 'hopscope_llm_gpu_oom_total',
    help: 'Requests whose GPU memory allocation failed in this LLM replica (gpu_oom), by model.',
    labelNames: ['model'],
    registers: [env.registry],
  });
  const fallbacks = new Counter({
    name: 'hopscope_llm_fallbacks_total',
    help: 'Requests served by a lighter model after an allocation failure.',
    labelNames: ['from_model', 'to_model'],
    registers: [env.registry],
  });

  /** One span event per failed allocation, with the driver call the kernel saw (when one was made). */
  const recordOom = (span: Span, model: ModelSpec, e: EngineError): void => {
    span.addEvent('gpu.allocation_failure', {
      'exception.type': 'torch.cuda.OutOfMemoryError',
      'exception.message': e.message,
      'gen_ai.request.model': model.id,
      ...(e.bytes !== undefined ? { 'hopscope.gpu.allocation_bytes': e.bytes } : {}),
      ...(e.cudaResult !== undefined
        ? {
            'hopscope.cuda.function': 'cuMemAlloc_v2',
            'hopscope.cuda.result': e.cudaResult,
            'hopscope.cuda.driver_pid': driver?.pid ?? 0,
          }
        : {}),
    });
  };

  /** vLLM's engine died under the request: its exception, and what the group's watchdog saw (group, rank, collective). */
  const recordEngineDead = (span: Span, e: EngineError): void => {
    const nccl = e.cause instanceof NcclTimeoutError ? e.cause.info : undefined;
    span.addEvent('exception', {
      'exception.type': 'vllm.v1.engine.exceptions.EngineDeadError',
      'exception.message': e.message,
    });
    if (!nccl) return;
    span.setAttributes({
      'hopscope.nccl.collective': nccl.collective,
      'hopscope.nccl.rank': nccl.rank,
      'hopscope.nccl.rank_pod': nccl.rankPod,
      'hopscope.nccl.stalled_ranks': nccl.stalledRanks,
      'hopscope.nccl.seq': nccl.seq,
      'hopscope.nccl.count': nccl.count,
      'hopscope.nccl.timeout_ms': nccl.timeoutMs,
      'hopscope.nccl.ran_ms': nccl.ranForMs,
      'hopscope.nccl.result': nccl.resultName,
      'hopscope.nccl.error': nccl.message,
      ...(nccl.pid ? { 'hopscope.nccl.rank_pid': nccl.pid } : {}),
    });
  };

  /** Runs one generation, resolving when done; tokens go to onToken as they are decoded. */
  const generate = (
    model: ModelSpec,
    prompt: { tokens: number; prefixKey: string; prefixTokens: number },
    maxTokens: number,
    targetTokens: number,
    onToken: (i: number) => void,
    abortOn: ServerResponse
  ): Promise<SeqResult> =>
    new Promise((resolve, reject) => {
      metrics.onArrival(model.id, prompt.tokens, maxTokens);
      let cancel: (() => void) | undefined;
      try {
        cancel = engine.submit(
          {
            model,
            promptTokens: prompt.tokens,
            prefixKey: prompt.prefixKey,
            prefixTokens: prompt.prefixTokens,
            maxTokens,
            targetTokens,
          },
          { onToken: (i) => onToken(i), onDone: resolve, onError: reject }
        );
      } catch (err) {
        reject(err);
        return;
      }
      abortOn.once('close', () => {
        if (!abortOn.writableFinished) {
          cancel?.();
          reject(new EngineError('aborted', 'client closed the connection'));
        }
      });
    });

  const chat = async (req: HopRequest, res: ServerResponse, span: Span): Promise<void> => {
    const b = req.body ?? {};
    const modelId: string = b.model ?? MODEL_IDS[0];
    let model = MODELS[modelId];
    if (!model)
      throw new HopError(
        404,
        'model_not_found',
        `The model \`${modelId}\` does not exist. Available: ${MODEL_IDS.join(', ')}`
      );
    const messages: ChatMessage[] = Array.isArray(b.messages) ? b.messages : [];
    if (!messages.length || messages.some((m) => typeof m?.content !== 'string'))
      throw new HopError(400, 'validation', 'messages must be a non-empty array of {role, content}');
    const maxTokens = Math.max(1, Math.min(Number(b.max_tokens ?? 64) | 0, 2048));
    const stream = b.stream === true;
    // The prefix cache keys on the first system message (the template every request shares).
    const system = messages.find((m) => m.role === 'system')?.content ?? '';
    const promptText = messages.map((m) => m.content).join('\n');
    const prompt = {
      tokens: countTokens(promptText) + 4 * messages.length,
      prefixKey: `${model.id}|${system}`,
      prefixTokens: countTokens(system),
    };
    // Output length: a seeded draw per prompt, so the same prompt writes as much each time.
    const f = hashFraction(promptText);
    const targetTokens = f < 0.3 ? maxTokens : Math.max(1, Math.round(maxTokens * (0.5 + f * 0.5)));
    const id = `chatcmpl-${Math.floor(env.rand() * 1e12).toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    span.updateName(`chat ${model.id}`);
    span.setAttributes({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': backend,
      'gen_ai.request.model': model.id,
      'gen_ai.request.max_tokens': maxTokens,
      'gen_ai.request.stream': stream,
      'gen_ai.response.id': id,
      'gen_ai.usage.input_tokens': prompt.tokens,
      'hopscope.llm.backend': backend,
    });
    if (group) {
      span.setAttributes({ 'hopscope.llm.tp_group': replica.pod, 'hopscope.llm.tp_size': group.size });
      if (group.restarting)
        throw new HopError(
          503,
          'engine_restarting',
          `tensor-parallel group ${replica.pod} is restarting after an NCCL watchdog timeout`,
          'engine_restarting'
        );
    }
    const words = fillerText(targetTokens * 2, Math.floor(f * 1e9)).split(' ');
    const tokenText = (i: number) => `${words[i % words.length]} `;

    let firstChunkAt = 0;
    const t0 = performance.now();
    if (stream) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
    }
    const write = (i: number): void => {
      if (!stream) return;
      if (!firstChunkAt) {
        firstChunkAt = performance.now();
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`
        );
      }
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [{ index: 0, delta: { content: tokenText(i) }, finish_reason: null }] })}\n\n`
      );
    };

    let result: SeqResult;
    try {
      result = await generate(model, prompt, maxTokens, targetTokens, write, res);
    } catch (err) {
      const e = err as EngineError;
      metrics.onFailure(model.id, e.code ?? 'generation');
      if (e.code === 'gpu_oom') {
        oomCounter.inc({ model: model.id });
        recordOom(span, model, e);
        span.setAttribute('hopscope.gpu.oom', true);
        const light = model.fallback ? MODELS[model.fallback] : undefined;
        if (!light) throw new HopError(503, 'gpu_oom', e.message, 'gpu_oom');
        fallbacks.inc({ from_model: model.id, to_model: light.id });
        span.setAttributes({
          'hopscope.fallback.from_model': model.id,
          'hopscope.fallback.model': light.id,
          'hopscope.fallback.reason': 'gpu_oom',
        });
        model = light;
        try {
          result = await generate(
            model,
            { ...prompt, prefixKey: `${model.id}|${system}` },
            maxTokens,
            targetTokens,
            write,
            res
          );
        } catch (err2) {
          const e2 = err2 as EngineError;
          metrics.onFailure(model.id, e2.code ?? 'generation');
          if (e2.code === 'gpu_oom') {
            oomCounter.inc({ model: model.id });
            recordOom(span, model, e2);
          }
          throw new HopError(
            503,
            e2.code ?? 'generation',
            `fallback ${model.id} failed too: ${e2.message}`,
            e2.code ?? 'generation'
          );
        }
      } else if (e.code === 'engine_dead') {
        recordEngineDead(span, e);
        throw new HopError(500, 'engine_dead', e.message, 'EngineDeadError');
      } else if (e.code === 'overloaded') {
        throw new HopError(503, 'overloaded', e.message, 'overloaded');
      } else if (e.code === 'aborted') {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'client closed the connection' });
        span.setAttribute('error.type', 'client_abort');
        return;
      } else {
        throw err;
      }
    }
    metrics.onFinish(model.id, result, maxTokens, traceExemplar(span));
    recordEngineSpans(env.tracer, {
      backend,
      parent: span,
      startedMs: t0,
      result,
      requestId: id,
      model: model.id,
      maxTokens,
      ...(typeof b.temperature === 'number' ? { temperature: b.temperature } : {}),
      ...(typeof b.top_p === 'number' ? { topP: b.top_p } : {}),
      pod: replica.pod,
    });
    const usage = {
      prompt_tokens: result.promptTokens,
      completion_tokens: result.outputTokens,
      total_tokens: result.promptTokens + result.outputTokens,
      prompt_tokens_details: { cached_tokens: result.cachedTokens },
    };
    span.setAttributes({
      'gen_ai.response.model': model.id,
      'gen_ai.response.finish_reasons': [result.finishReason],
      'gen_ai.usage.output_tokens': result.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': result.cachedTokens,
      'gen_ai.response.time_to_first_chunk': (result.firstTokenMs - t0) / 1000,
      'hopscope.llm.queue_ms': Math.max(0, result.scheduledMs - result.arrivalMs),
      'hopscope.llm.batch_size': result.maxBatch,
      'hopscope.llm.preemptions': result.preemptions,
      'hopscope.llm.kv_cache_usage': Number(engine.kvUsage.toFixed(3)),
    });
    if (stream) {
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [{ index: 0, delta: {}, finish_reason: result.finishReason }] })}\n\n`
      );
      if (b.stream_options?.include_usage)
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: model.id, choices: [], usage })}\n\n`
        );
      res.end('data: [DONE]\n\n');
      return;
    }
    const content = Array.from({ length: result.outputTokens }, (_, i) => tokenText(i)).join('');
    if (backend === 'tgi') {
      const ms = (x: number) => String(Math.round(Math.max(0, x)));
      res.setHeader('x-queue-time', ms(result.scheduledMs - result.arrivalMs));
      res.setHeader('x-inference-time', ms(result.endMs - result.scheduledMs));
      res.setHeader('x-total-time', ms(result.endMs - result.arrivalMs));
      res.setHeader('x-time-per-token', ms((result.endMs - result.scheduledMs) / Math.max(1, result.outputTokens)));
      res.setHeader('x-prompt-tokens', String(result.promptTokens));
      res.setHeader('x-generated-tokens', String(result.outputTokens));
    }
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: model.id,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: result.finishReason }],
      usage,
    });
  };

  const models = async (_req: HopRequest, res: ServerResponse): Promise<void> => {
    sendJson(res, 200, {
      object: 'list',
      data: MODEL_IDS.map((id) => ({ id, object: 'model', owned_by: 'hopscope', created: 0 })),
    });
  };

  return {
    routes: { 'POST /v1/chat/completions': chat, 'GET /v1/models': models },
    engine,
    backend,
    get gpuDriverPid() {
      return driver?.pid;
    },
    group,
    stop: () => {
      leak.stop();
      engine.stop();
      driver?.stop();
      group?.stop();
    },
  };
}

/** The replica's tensor-parallel group: rank processes linked against the stand-in libnccl.so.2 where it can be
 *  built (each registered with the bpf-exporter as its rank's pod at every start), else ranks simulated here. */
function startGroup(env: HopEnv): TpGroup {
  const { cfg, replica, faults, log } = env;
  const standIn = cfg.cudaStandIn ? ensureNcclStandIn() : undefined;
  if (standIn && !standIn.ok)
    log.warn(
      { reason: standIn.reason },
      `no stand-in libnccl.so.2: ${standIn.reason}. Collectives are simulated without the kernel signal`
    );
  const size = cfg.tensorParallel;
  return new TpGroup({
    group: replica.pod,
    size,
    timeoutMs: cfg.executeModelTimeoutS * 1000,
    restartMs: env.scale(GROUP_RESTART_MS),
    log,
    startRank: (rank) => (standIn?.ok ? new NcclRankProcess(standIn, size, rank, log) : new SimulatedNcclRank()),
    stalledRank: () => {
      const f = faults.active(replica.hop, replica.pod, 'nccl_timeout');
      return f ? Math.min(Math.round(f.magnitude), size - 1) : undefined;
    },
    onStart: (ranks) => {
      const url = cfg.exporterUrl;
      if (!url) return;
      void (async () => {
        for (const r of ranks)
          if (r.pid)
            await registerWithExporter(
              url,
              { pid: r.pid, pod: r.pod, namespace: replica.namespace, node: replica.node, service: replica.hop },
              log,
              cfg.exporterToken
            );
      })();
    },
  });
}

/** How often the leak allocates (its rate is per second; each tick allocates its share). */
export const LEAK_TICK_MS = 250;

/**
 * gpu_memory_leak on this replica: every tick, magnitude MiB/s × the time since the last tick through the driver (cuMemAlloc_v2, kept), counted in
 * the engine's `leakedBytes` once the driver says it succeeded, up to the whole KV pool (the last one takes what is
 * left); past it every allocation fails (CUDA_ERROR_OUT_OF_MEMORY), and so does every admission. When no leak is active any more, everything leaked is freed.
 */
function startLeak(env: HopEnv, engine: InferenceEngine, driver: CudaDriver | undefined): { stop(): void } {
  const { faults, replica } = env;
  let busy = false;
  let lastAt = performance.now();
  const tick = async (): Promise<void> => {
    const f = faults.active(replica.hop, replica.pod, 'gpu_memory_leak');
    // By the time elapsed, not the tick count: a busy event loop fires timers late, the leak's rate stays the fault's.
    const now = performance.now();
    const elapsedMs = Math.min(2000, now - lastAt);
    lastAt = now;
    if (!f) {
      if (engine.leakedBytes > 0) {
        engine.leakedBytes = 0;
        await driver?.release();
      }
      return;
    }
    const bytes = Math.round((f.magnitude * 2 ** 20 * elapsedMs) / 1000);
    if (bytes <= 0) return;
    // What still fits is taken (a smaller allocation succeeds where a larger one would not); nothing left: it fails.
    const room = engine.opts.kvPoolBytes - engine.leakedBytes;
    const full = room <= 0;
    const size = full ? bytes : Math.min(bytes, room);
    const r = driver ? await driver.leak(size, full) : full ? 2 : 0;
    if (r === 0 || (r === undefined && !full)) engine.leakedBytes += size;
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void tick().finally(() => {
      busy = false;
    });
  }, LEAK_TICK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
