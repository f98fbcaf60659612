import { z } from 'zod';

/**
 * How much load a chain takes: a sweep or ramp run's steps as the client counted them, and the capacity found in them
 * (`GET /api/runs/:runId` → `capacity`, `hopscope-load --json` → `capacity`): the highest offered rate at which the
 * SLOs held, the knee (where achieved stops following offered, or an engine's queue starts to grow), and the hop, pod
 * and resource that saturated first, with the evidence that decided it.
 */

/** The resource that saturated: an engine's own queue / KV cache / running-sequence limit, or the pod's CPU, GPU, network. */
export const CapacityResource = z.enum([
  'engine_queue',
  'kv_cache',
  'running_limit',
  'cpu',
  'gpu',
  'network',
  'unknown',
]);
export type CapacityResource = z.infer<typeof CapacityResource>;

/** One step of a sweep (one window of a ramp), as the client counted it (counts exact, not sampled). */
export const CapacityStep = z.object({
  index: z.number().int().nonnegative(),
  /** Epoch ms of the step's start and end (the schedule's). */
  startMs: z.number(),
  endMs: z.number(),
  /** The profile's mean rate over the step. */
  offeredRps: z.number().nonnegative(),
  /** Requests sent in the step (by their scheduled instant) and, of those, served (ok or degraded) and good. */
  sent: z.number().int().nonnegative(),
  served: z.number().int().nonnegative(),
  good: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  /** Served / good answers that ended in the step's settled second half, per second (the throughput it kept up). */
  achievedRps: z.number().nonnegative(),
  goodRps: z.number().nonnegative(),
  /** The SLOs held: at least `sloAttainment` of the step's requests were good. */
  sloHeld: z.boolean(),
  e2eP99Ms: z.number().nullable(),
  /** Sends that left more than 10 ms late, and the driver's own CPU (share of one core) over the step. */
  lateOver10ms: z.number().int().nonnegative(),
  driverCpu: z.number().nonnegative().nullable(),
});
export type CapacityStep = z.infer<typeof CapacityStep>;

export const Bottleneck = z.object({
  /** The hop (service) and pod; null when no signal names one (`resource: unknown`). */
  service: z.string().nullable(),
  pod: z.string().nullable(),
  resource: CapacityResource,
  /** What decided it, in one sentence with the metric and its figures. */
  evidence: z.string(),
});
export type Bottleneck = z.infer<typeof Bottleneck>;

export const Capacity = z.object({
  /** The highest offered rate whose step held the SLOs; null when none did. */
  maxGoodRps: z.number().nullable(),
  /** The knee: the offered rate and instant of the first step where the chain stopped keeping up; null: no knee. */
  kneeRps: z.number().nullable(),
  kneeAtMs: z.number().nullable(),
  /** What saturated first, and next; null when nothing saturated. */
  bottleneck: Bottleneck.nullable(),
  next: Bottleneck.nullable(),
  /** "no knee up to N req/s", a lower bound (the driver fell behind), or missing evidence; null when nothing to add. */
  note: z.string().nullable(),
  /** The driver fell behind: the chain may take more than this run says. */
  lowerBound: z.boolean(),
});
export type Capacity = z.infer<typeof Capacity>;

/** One hop's saturation signal over a run, as read from Prometheus (for the analysis and the run page). */
export const SaturationSignal = z.object({
  service: z.string(),
  pod: z.string().nullable(),
  resource: CapacityResource,
  /** The metric (or PromQL) read, as named by its exporter. */
  metric: z.string(),
  /** Where it saturates: a fraction (1 = full) for KV cache, CPU, GPU; a count for a limit; null for a queue (> 0). */
  limit: z.number().nullable(),
  points: z.array(z.tuple([z.number(), z.number()])),
});
export type SaturationSignal = z.infer<typeof SaturationSignal>;

/**
 * `GET /api/runs/:runId/saturation`: each hop's saturation signal over a sweep's or ramp's window, the same signals
 * (read by the same plans) the capacity analysis decided on, so the run page draws exactly what the verdict used.
 * Empty for a run without steps; what could not be read is in `missing`.
 */
export const RunSaturationAnswer = z.object({
  runId: z.string(),
  /** The window read (the steps' first start to last end); null for a run without steps. */
  from: z.number().nullable(),
  to: z.number().nullable(),
  signals: z.array(SaturationSignal),
  missing: z.array(z.string()),
});
export type RunSaturationAnswer = z.infer<typeof RunSaturationAnswer>;
