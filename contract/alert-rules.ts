import type { AlertRule } from './proxy';

/**
 * The composite alert rules Hopscope ships: the set a proxy seeds its database with when it holds none (and no
 * HOPSCOPE_ALERT_RULES_FILE), and the example the app's rule editor starts from. One place for both.
 */

/** 3 consecutive TLS handshakes > 500 ms on a pod and a GPU allocation failure within 5 s. */
export const TLS_SLOW_AND_GPU_OOM_RULE: AlertRule = {
  id: 'tls-slow-and-gpu-oom',
  name: 'Slow TLS handshakes with a GPU allocation failure',
  conditions: [
    { kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 },
    { kind: 'kernel', type: 'gpu_alloc_fail', atLeast: 1 },
  ],
  withinMs: 5000,
  lookbackMs: 60_000,
  severity: 'critical',
  enabled: true,
};

/** The TTFT SLO the LLM rule holds engines to, in seconds (the shipped scenarios' `slo.ttftMs`: 1000). */
export const LLM_TTFT_SLO_S = 1;

/**
 * An inference engine's queue growing while TTFT P99 breaches its SLO: requests pile up in front of the engine
 * (`max_num_seqs` or the KV cache full) and the first token comes late. Per engine endpoint (`instance`), from the
 * engines' own metrics as they expose them — vLLM `vllm:num_requests_waiting` (gauge) and
 * `vllm:time_to_first_token_seconds` (histogram), vllm/v1/metrics/loggers.py; SGLang `sglang:num_queue_reqs` and
 * `sglang:time_to_first_token_seconds`, python/sglang/srt/metrics/collector.py at sgl-project/sglang@00ae9c1590d2. "Growing": the waiting count's
 * per-second slope over 2 minutes above 0.05 (3 more requests a minute) while at least 5 wait.
 */
export const LLM_QUEUE_TTFT_RULE: AlertRule = {
  id: 'llm-queue-growing-ttft-slo',
  name: "An engine's queue growing while TTFT P99 breaches its SLO",
  conditions: [
    {
      kind: 'metric',
      expr:
        'max by (instance) (deriv(vllm:num_requests_waiting[2m]) and vllm:num_requests_waiting >= 5)' +
        ' or max by (instance) (deriv(sglang:num_queue_reqs[2m]) and sglang:num_queue_reqs >= 5)',
      op: '>',
      threshold: 0.05,
    },
    {
      kind: 'metric',
      expr:
        'histogram_quantile(0.99, sum by (le, instance) (rate(vllm:time_to_first_token_seconds_bucket[1m])))' +
        ' or histogram_quantile(0.99, sum by (le, instance) (rate(sglang:time_to_first_token_seconds_bucket[1m])))',
      op: '>',
      threshold: LLM_TTFT_SLO_S,
    },
  ],
  withinMs: 60_000,
  lookbackMs: 120_000,
  severity: 'warning',
  enabled: true,
};

export const DEFAULT_ALERT_RULES: readonly AlertRule[] = [TLS_SLOW_AND_GPU_OOM_RULE, LLM_QUEUE_TTFT_RULE];
