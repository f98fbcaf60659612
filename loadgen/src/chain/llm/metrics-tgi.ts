/**
 * Hugging Face TGI router metrics as metrics-exporter-prometheus renders them (fixtures/metrics/tgi): counters
 * without `_total`, no model label (one model per server as far as the metrics can tell), no TTFT metric, histograms
 * with TGI's buckets (35 geometric duration buckets, 100 linear token buckets, batch size 1..1024).
 */
import { Counter, Gauge, Histogram, Summary, type Registry } from 'prom-client';
import type { InferenceEngine, StepInfo } from './engine';
import type { LlmMetrics } from './metrics-vllm';

export const TGI_MAX_TOTAL_TOKENS = 4096;
export const TGI_MAX_INPUT_TOKENS = 4095;
export const TGI_DURATION_BUCKETS = Array.from({ length: 35 }, (_, i) =>
  Number((0.0001 * 1.5 ** (i + 1)).toPrecision(6))
);
const linear = (max: number) => Array.from({ length: 100 }, (_, i) => (max / 100) * (i + 1));

export function tgiMetrics(registry: Registry, engine: InferenceEngine): LlmMetrics {
  const reg = [registry];
  const dur = (name: string, help: string, labelNames: string[] = []) =>
    new Histogram({ name, help, labelNames, buckets: TGI_DURATION_BUCKETS, registers: reg });
  const count = new Counter({ name: 'tgi_request_count', help: 'Total number of requests', registers: reg });
  const success = new Counter({ name: 'tgi_request_success', help: 'Number of successful requests', registers: reg });
  const failure = new Counter({
    name: 'tgi_request_failure',
    help: 'Number of failed requests',
    labelNames: ['err'],
    registers: reg,
  });
  const duration = dur('tgi_request_duration', 'Total time spent processing the request (e2e latency)');
  const validation = dur('tgi_request_validation_duration', 'Time spent validating the request');
  const queue = dur('tgi_request_queue_duration', 'Time spent in the queue per request');
  const inference = dur('tgi_request_inference_duration', 'Request inference duration');
  const meanTpt = dur(
    'tgi_request_mean_time_per_token_duration',
    'Mean time per token per request (inter-token latency)'
  );
  const generated = new Histogram({
    name: 'tgi_request_generated_tokens',
    help: 'Generated tokens per request',
    buckets: linear(TGI_MAX_TOTAL_TOKENS),
    registers: reg,
  });
  const input = new Histogram({
    name: 'tgi_request_input_length',
    help: 'Input token length per request',
    buckets: linear(TGI_MAX_INPUT_TOKENS),
    registers: reg,
  });
  const maxNew = new Histogram({
    name: 'tgi_request_max_new_tokens',
    help: 'Maximum new tokens per request',
    buckets: linear(TGI_MAX_TOTAL_TOKENS),
    registers: reg,
  });
  // No buckets configured in TGI → the exporter renders a summary.
  const skipped = new Summary({
    name: 'tgi_request_skipped_tokens',
    help: 'Speculated tokens per request',
    percentiles: [0, 0.5, 0.9, 0.95, 0.99, 0.999, 1],
    registers: reg,
  });
  const nextSize = new Histogram({
    name: 'tgi_batch_next_size',
    help: 'Batch size of the next batch',
    buckets: Array.from({ length: 1024 }, (_, i) => i + 1),
    registers: reg,
  });
  new Gauge({
    name: 'tgi_batch_current_size',
    help: 'Current batch size',
    registers: reg,
    collect() {
      this.set(engine.numRunning);
    },
  });
  new Gauge({
    name: 'tgi_batch_current_max_tokens',
    help: 'Maximum tokens for the current batch',
    registers: reg,
    collect() {
      this.set(Math.round(engine.kvUsage * engine.capacityTokens));
    },
  });
  new Gauge({
    name: 'tgi_batch_max_total_tokens',
    help: 'Maximum amount of tokens in total.',
    registers: reg,
    collect() {
      this.set(engine.capacityTokens);
    },
  });
  new Gauge({
    name: 'tgi_queue_size',
    help: 'Current queue size',
    registers: reg,
    collect() {
      this.set(engine.numWaiting);
    },
  });
  const concat = new Counter({
    name: 'tgi_batch_concat',
    help: 'Number of batch concatenates',
    labelNames: ['reason'],
    registers: reg,
  });
  const concatDur = dur('tgi_batch_concat_duration', 'Time spent concatenating batches', ['method']);
  const infCount = new Counter({
    name: 'tgi_batch_inference_count',
    help: 'Inference calls per method (prefill or decode)',
    labelNames: ['method'],
    registers: reg,
  });
  const infOk = new Counter({
    name: 'tgi_batch_inference_success',
    help: 'Number of successful inference calls per method (prefill or decode)',
    labelNames: ['method'],
    registers: reg,
  });
  const infFail = new Counter({
    name: 'tgi_batch_inference_failure',
    help: 'Number of failed inference calls per method',
    labelNames: ['method'],
    registers: reg,
  });
  const forward = dur('tgi_batch_forward_duration', 'Batch forward duration per method (prefill or decode)', [
    'method',
  ]);
  const decodeDur = dur('tgi_batch_decode_duration', 'Time spent decoding a batch per method (prefill or decode)', [
    'method',
  ]);
  const filterDur = dur(
    'tgi_batch_filter_duration',
    'Time spent filtering batches and sending generated tokens per method (prefill or decode)',
    ['method']
  );
  const batchInf = dur('tgi_batch_inference_duration', 'Batch inference duration', ['method']);

  engine.on('step', (s: StepInfo) => {
    const sec = s.durationMs / 1000;
    const method = s.prefillSeqs > 0 ? 'prefill' : 'decode';
    infCount.inc({ method });
    infOk.inc({ method });
    forward.observe({ method }, sec * 0.85);
    decodeDur.observe({ method }, sec * 0.1);
    filterDur.observe({ method }, sec * 0.05);
    batchInf.observe({ method }, sec);
    nextSize.observe(s.prefillSeqs + s.decodeSeqs);
    if (s.prefillSeqs > 0 && s.decodeSeqs > 0) {
      concat.inc({ reason: 'backpressure' });
      concatDur.observe({ method: 'decode' }, 0.0002);
    }
  });

  return {
    onArrival(_model, promptTokens, maxTokens) {
      count.inc();
      validation.observe(0.0004 + promptTokens * 2e-7);
      input.observe(promptTokens);
      maxNew.observe(maxTokens);
    },
    onFinish(_model, r) {
      const s = (ms: number) => Math.max(0, ms) / 1000;
      success.inc();
      duration.observe(s(r.endMs - r.arrivalMs));
      queue.observe(s(r.scheduledMs - r.arrivalMs));
      inference.observe(s(r.endMs - r.scheduledMs));
      if (r.outputTokens > 0) meanTpt.observe(s(r.endMs - r.scheduledMs) / r.outputTokens);
      generated.observe(r.outputTokens);
      skipped.observe(0);
    },
    onFailure(_model, code) {
      // A request failed before the engine (injected error) never passed onArrival: it still arrived.
      if (code === 'injected_error') count.inc();
      failure.inc({ err: code === 'overloaded' ? 'overloaded' : code === 'validation' ? 'validation' : 'generation' });
      if (code === 'gpu_oom') infFail.inc({ method: 'prefill' });
    },
  };
}
