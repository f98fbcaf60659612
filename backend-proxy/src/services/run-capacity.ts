/**
 * A sweep's or ramp's capacity (`GET /api/runs/:runId` → `capacity`): the run's counted steps (the client's, exact)
 * with the hops' saturation signals over the run read from Prometheus, through the pure analysis in
 * contract/capacity-analysis.ts. Signals, by `service` and `pod` (the scrape's labels):
 *  - each engine's own state (contract/engines ENGINE_STATE_METRICS, old and new names joined with `or`): vLLM
 *    `vllm:num_requests_waiting` / `_running` / `vllm:kv_cache_usage_perc` (older `vllm:gpu_cache_usage_perc`), SGLang
 *    `sglang:num_queue_reqs` / `num_running_reqs` / `token_usage`, TGI `tgi_queue_size` / `tgi_batch_current_size` /
 *    `tgi_batch_current_max_tokens ÷ tgi_batch_max_total_tokens`;
 *  - the pod's CPU: `rate(process_cpu_seconds_total)` (every Prometheus client library's process collector), in cores,
 *    saturated at 0.9 of one core (no Kubernetes CPU limit is read: a Node or Python pod's main thread is one core);
 *  - GPU: DCGM `DCGM_FI_PROF_SM_ACTIVE` by pod, saturated at 0.95;
 *  - network: the bpf-exporter's `rate(hopscope_tcp_retransmits_total)` by pod, saturated at 1 retransmit/s.
 * A finished run's answer is kept (its steps and its window no longer change); what could not be read is said.
 */
import {
  analyseCapacity,
  ENGINE_STATE_METRICS,
  type Capacity,
  type CapacityResource,
  type EngineFigure,
  type EngineFigureSource,
  type RunRecord,
  type RunSaturationAnswer,
  type SaturationSignal,
} from '../../../contract';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';
import { promDuration, rateIntervalMs } from './promql';

interface SignalPlan {
  resource: CapacityResource;
  metric: string;
  query: (rateW: string) => string;
  limit: number | null;
}

const BY = 'service, pod';
/** Most points a signal keeps over a run (the step never goes under the scrape interval). */
const MAX_POINTS = 240;
const CACHE = 200;

const anyOf = (names: readonly string[]): string =>
  names.length === 1 ? `max by (${BY}) (${names[0]})` : names.map((n) => `max by (${BY}) (${n})`).join(' or ');

function engineQuery(src: EngineFigureSource): string | undefined {
  if (src.kind === 'gauge') return anyOf(src.metric);
  if (src.kind === 'gauge_ratio') return `(${anyOf(src.numerator)}) / (${anyOf(src.denominator)})`;
  return undefined;
}

const ENGINE_RESOURCE: Partial<Record<EngineFigure, { resource: CapacityResource; limit: number | null }>> = {
  waiting: { resource: 'engine_queue', limit: 1 },
  running: { resource: 'running_limit', limit: null },
  kvCacheUsage: { resource: 'kv_cache', limit: 0.95 },
};

function plans(): SignalPlan[] {
  const out: SignalPlan[] = [];
  for (const figures of Object.values(ENGINE_STATE_METRICS))
    for (const [figure, src] of Object.entries(figures) as Array<[EngineFigure, EngineFigureSource]>) {
      const r = ENGINE_RESOURCE[figure];
      const q = engineQuery(src);
      if (!r || !q) continue;
      const metric =
        src.kind === 'gauge'
          ? src.metric.join(' or ')
          : src.kind === 'gauge_ratio'
            ? `${src.numerator[0]} / ${src.denominator[0]}`
            : '';
      out.push({ ...r, metric, query: () => q });
    }
  out.push(
    {
      resource: 'cpu',
      metric: 'rate(process_cpu_seconds_total)',
      limit: 0.9,
      query: (w) => `sum by (${BY}) (rate(process_cpu_seconds_total{pod!=""}[${w}]))`,
    },
    {
      resource: 'gpu',
      metric: 'DCGM_FI_PROF_SM_ACTIVE',
      limit: 0.95,
      query: () => `max by (pod) (DCGM_FI_PROF_SM_ACTIVE{pod!=""})`,
    },
    {
      resource: 'network',
      metric: 'rate(hopscope_tcp_retransmits_total)',
      limit: 1,
      query: (w) => `sum by (pod) (rate(hopscope_tcp_retransmits_total{pod!=""}[${w}]))`,
    }
  );
  return out;
}

/** The hop a pod belongs to, from the other signals (the engine's and CPU's carry `service`). */
function serviceOf(pod: string, signals: SaturationSignal[]): string {
  return signals.find((s) => s.pod === pod && s.service !== pod)?.service ?? pod;
}

function toSignals(plan: SignalPlan, series: PromSeries[]): SaturationSignal[] {
  return series.map((s) => ({
    service: s.metric.service ?? s.metric.job ?? s.metric.pod ?? 'unknown',
    pod: s.metric.pod ?? null,
    resource: plan.resource,
    metric: plan.metric,
    limit: plan.limit,
    points: s.points.filter((p): p is [number, number] => p[1] !== null),
  }));
}

export class RunCapacityService {
  private readonly done = new Map<string, Capacity>();

  constructor(
    private readonly prometheus: PrometheusSource | undefined,
    private readonly scrapeMs: number
  ) {}

  /** The capacity of a sweep/ramp/step run with steps; null for the others (and while none is counted). */
  async capacityOf(rec: RunRecord): Promise<Capacity | null> {
    const steps = rec.summary?.steps;
    if (!steps?.length) return null;
    const kept = this.done.get(rec.runId);
    if (kept) return kept;
    const from = steps[0].startMs;
    const to = steps[steps.length - 1].endMs;
    const missing: string[] = [];
    const signals = await this.signals(from, to, missing);
    const c = analyseCapacity(steps, signals, { missing });
    // Keep the answer once every source answered for a finished run.
    if (rec.status !== 'running' && !missing.length) {
      if (this.done.size >= CACHE) this.done.delete(this.done.keys().next().value!);
      this.done.set(rec.runId, c);
    }
    return c;
  }

  /** Each hop's saturation signal over the run's steps (the run page's chart): what the analysis reads. */
  async saturationOf(rec: RunRecord): Promise<RunSaturationAnswer> {
    const steps = rec.summary?.steps;
    if (!steps?.length) return { runId: rec.runId, from: null, to: null, signals: [], missing: [] };
    const from = steps[0].startMs;
    const to = steps[steps.length - 1].endMs;
    const missing: string[] = [];
    const signals = await this.signals(from, to, missing);
    return { runId: rec.runId, from, to, signals, missing };
  }

  /** The hops' saturation signals over [from, to]; what could not be read goes to `missing`. */
  async signals(from: number, to: number, missing: string[]): Promise<SaturationSignal[]> {
    if (!this.prometheus) {
      missing.push('no Prometheus configured: no hop saturation signals (the knee is the client’s alone)');
      return [];
    }
    const prom = this.prometheus;
    const stepMs = Math.max(this.scrapeMs, Math.ceil((to - from) / MAX_POINTS / 1000) * 1000);
    const w = promDuration(rateIntervalMs(stepMs, this.scrapeMs));
    const answers = await Promise.allSettled(
      plans().map((p) => prom.queryRange(p.query(w), from, to, stepMs).then((s) => toSignals(p, s)))
    );
    const out: SaturationSignal[] = [];
    let failed: string | undefined;
    for (const a of answers) {
      if (a.status === 'fulfilled') out.push(...a.value);
      else failed ??= (a.reason as Error).message;
    }
    if (failed) missing.push(`Prometheus: ${failed}`);
    // GPU and network series are by pod only: name their hop from the others.
    for (const s of out) if (s.service === s.pod && s.pod) s.service = serviceOf(s.pod, out);
    return out;
  }
}
