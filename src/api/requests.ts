/**
 * The parameters of proxy requests whose shape two callers must agree on exactly: the data source's query kinds and
 * module.js's early requests (features/overview/queries.ts) — an early answer is only taken for the same parameters.
 * Plain functions, no schema (zod) or Grafana import: module.js imports them.
 */

/** Step so a range has about 240 points (Grafana's own default density), never below 5 s. */
export function goldenStepMs(fromMs: number, toMs: number): number {
  return Math.max(5000, Math.round((toMs - fromMs) / 240 / 1000) * 1000);
}

export interface GoldenFilters {
  backend?: string;
  model?: string;
  service?: string;
}

/** `GET /golden`'s parameters for a window and the variables' filters (undefined = All). */
export function goldenParams(from: number, to: number, f: GoldenFilters = {}) {
  return {
    from,
    to,
    step: `${goldenStepMs(from, to) / 1000}s`,
    service: f.service,
    backend: f.backend,
    model: f.model,
  };
}
