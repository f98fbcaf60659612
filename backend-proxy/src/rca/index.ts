/**
 * The root-cause engine: pure functions, no I/O, deterministic (only `tookMs` varies).
 * - `rankTrace`: one trace (a slow or failed request) → critical path + ranked hops with evidence.
 * - `rankWindow`: many traces of an incident window → ranked services and pods.
 * - `buildBaseline`: per (service, kind, operation) robust statistics of healthy traffic.
 */
export { rankTrace, type RankTraceInput, type TraceRcaAnswer } from './rank-trace';
export { rankWindow, type RankWindowInput, type WindowRcaAnswer } from './rank-window';
export { baselineStats, groupByTrace, type Baseline } from './baseline';
export { buildBaseline } from './background';
export { RcaConfigError, RcaConfigSchema, type RcaConfigInput } from './config';
export { indexKernelEvents, type KernelIndex } from './kernel';
export type { EngineStateLookup, EngineStateTable } from './account';
export { engineStateOfTable } from './account';
