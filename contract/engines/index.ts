/**
 * Real inference engines' telemetry as the contract: the spans and metrics vLLM, SGLang and TGI emit, read from their
 * source at the commits in ./sources. One concept per file.
 */
export { ENGINE_SOURCES } from './sources';
export { parseTgiDuration, formatTgiDuration } from './tgi-duration';
export {
  ENGINE_METRIC_ALIASES,
  metricAliasesOf,
  currentMetricName,
  type EngineName,
  type MetricAlias,
} from './metric-aliases';
export { ENGINE_STATE_METRICS, type EngineFigure, type EngineFigureSource } from './engine-state-metrics';
export {
  VLLM_SPAN,
  SGLANG_SPAN,
  TGI_SPAN,
  SGLANG_ROOT_NAME_RE,
  sglangRootSpanName,
  sglangThreadSpanName,
} from './span-shapes';
export { llmPhasesOf, engineOfSpan, type LlmPhasesRead } from './llm-phases';
