/**
 * The inference engines' state on their pods at given instants, from their own metrics in Prometheus, for the root
 * cause's LLM phases: requests waiting and running, KV-cache usage, preemptions per minute, prefix-cache hit rate.
 * One range query per figure for the whole answer, however many pods and instants: every engine's name for the figure
 * (old and new vLLM releases, SGLang, TGI) in one `{__name__=~"…", pod=~"a|b"}` selector, so the series say which
 * name was found (the provenance). A figure no engine on the pod exposes is absent and said in `missing`, never 0.
 * Names: vLLM vllm/v1/metrics/loggers.py (the chain's metrics-vllm.ts; `gpu_cache_usage_perc` and
 * `gpu_prefix_cache_*` before their renames, `gpu_prefix_cache_hit_rate` of v0), SGLang
 * python/sglang/srt/metrics/collector.py, TGI router (`tgi_queue_size`, `tgi_batch_current_size`).
 */
import type { EngineMetricProvenance, EngineState } from '../../../contract';
import type { EngineStateLookup } from '../rca';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';

type Figure = 'waiting' | 'running' | 'kvCacheUsage' | 'preemptionsPerMin' | 'prefixCacheHitRate';

interface FigurePlan {
  figure: Figure;
  label: string;
  /** Every engine's name for it, preferred first (a pod exposing two, e.g. mid-upgrade, reads the first). */
  names: string[];
  /** gauge: the value at the instant; counter: the increase over the minute before it. */
  type: 'gauge' | 'counter';
}

/** The alias table (until contract/engines carries it): figure → the names engines expose it under. */
export const ENGINE_FIGURES: readonly FigurePlan[] = [
  {
    figure: 'waiting',
    label: 'requests waiting',
    names: ['vllm:num_requests_waiting', 'sglang:num_queue_reqs', 'tgi_queue_size'],
    type: 'gauge',
  },
  {
    figure: 'running',
    label: 'requests running',
    names: ['vllm:num_requests_running', 'sglang:num_running_reqs', 'tgi_batch_current_size'],
    type: 'gauge',
  },
  {
    figure: 'kvCacheUsage',
    label: 'KV-cache usage',
    names: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage'],
    type: 'gauge',
  },
  {
    figure: 'preemptionsPerMin',
    label: 'preemptions',
    names: ['vllm:num_preemptions_total'],
    type: 'counter',
  },
  {
    figure: 'prefixCacheHitRate',
    label: 'prefix-cache hit rate',
    // Counter pairs (hits ÷ queries over the minute), then the gauges that already are a rate.
    names: [
      'vllm:prefix_cache_hits_total',
      'vllm:prefix_cache_queries_total',
      'vllm:gpu_prefix_cache_hits_total',
      'vllm:gpu_prefix_cache_queries_total',
      'sglang:cache_hit_rate',
      'vllm:gpu_prefix_cache_hit_rate',
    ],
    type: 'counter',
  },
];

/** The minute before an instant, over which counters are read as a rate. */
const COUNTER_WINDOW_MS = 60_000;
/** Prometheus refuses more points per series than 11,000: the step grows with the range. */
const MAX_POINTS = 10_000;

export interface EngineStateRequest {
  service: string;
  pod: string;
  atMs: number;
}

export interface EngineStateAnswer {
  lookup: EngineStateLookup;
  missing: string[];
  /** Prometheus queries made (one per figure at most). */
  queries: number;
}

const reEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const lit = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Per pod and metric name: the series summed (per model, per engine index) as [t, v] in time order. */
type Samples = Map<string, Map<string, Array<[number, number]>>>;

function collect(series: PromSeries[], gaugeMax: boolean): Samples {
  const out: Samples = new Map();
  for (const s of series) {
    const pod = s.metric.pod;
    const name = s.metric.__name__;
    if (!pod || !name) continue;
    let byName = out.get(pod);
    if (!byName) out.set(pod, (byName = new Map()));
    const acc = new Map((byName.get(name) ?? []).map(([t, v]) => [t, v] as [number, number]));
    for (const [t, v] of s.points) {
      if (v === null) continue;
      const prev = acc.get(t);
      // Usage shares are per engine: their max says how full the fullest is; counts add up.
      acc.set(t, prev === undefined ? v : gaugeMax ? Math.max(prev, v) : prev + v);
    }
    byName.set(
      name,
      [...acc].sort((a, b) => a[0] - b[0])
    );
  }
  return out;
}

/** The last point at or before `t` (Prometheus' own lookback already applied per step). */
function at(points: Array<[number, number]>, t: number): [number, number] | undefined {
  let lo = 0;
  let hi = points.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid][0] <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 ? points[found] : undefined;
}

/** Increase of a counter over (from, to], a reset counted from 0, and the actual span in ms. */
function increase(points: Array<[number, number]>, from: number, to: number): { inc: number; ms: number } | undefined {
  const a = at(points, from) ?? points.find((p) => p[0] > from && p[0] <= to);
  const b = at(points, to);
  if (!a || !b || b[0] <= a[0]) return undefined;
  let inc = 0;
  let prev = a[1];
  for (const [t, v] of points) {
    if (t <= a[0] || t > b[0]) continue;
    inc += v >= prev ? v - prev : v;
    prev = v;
  }
  return { inc, ms: b[0] - a[0] };
}

export class EngineStateService {
  constructor(
    private prometheus: PrometheusSource | undefined,
    private scrapeMs: number
  ) {}

  async lookup(requests: EngineStateRequest[]): Promise<EngineStateAnswer> {
    const none: EngineStateLookup = () => undefined;
    if (!requests.length) return { lookup: none, missing: [], queries: 0 };
    if (!this.prometheus)
      return {
        lookup: none,
        missing: [
          'engine state: no Prometheus configured (HOPSCOPE_PROMETHEUS_URL), so the LLM phases name no queue depth or KV-cache usage',
        ],
        queries: 0,
      };
    const prom = this.prometheus;
    const pods = [...new Set(requests.map((r) => r.pod))].sort();
    let from = Infinity;
    let to = -Infinity;
    for (const r of requests) {
      from = Math.min(from, r.atMs - COUNTER_WINDOW_MS - this.scrapeMs);
      to = Math.max(to, r.atMs + this.scrapeMs);
    }
    const stepMs = Math.max(this.scrapeMs, Math.ceil((to - from) / MAX_POINTS / 1000) * 1000);
    const podRe = pods.map(reEscape).join('|');
    const missing: string[] = [];
    const data = new Map<Figure, Samples>();
    let queries = 0;
    await Promise.all(
      ENGINE_FIGURES.map(async (f) => {
        const q = `{__name__=~${lit(f.names.map(reEscape).join('|'))}, pod=~${lit(podRe)}}`;
        queries++;
        try {
          data.set(f.figure, collect(await prom.queryRange(q, from, to, stepMs), f.figure === 'kvCacheUsage'));
        } catch (err) {
          missing.push(`engine state: ${f.label} could not be read from Prometheus: ${(err as Error).message}`);
        }
      })
    );
    // What each pod lacks, said once per figure.
    for (const f of ENGINE_FIGURES) {
      const got = data.get(f.figure);
      if (!got) continue;
      const lacking = pods.filter((p) => !got.get(p)?.size);
      if (lacking.length)
        missing.push(
          `engine state: no ${f.label} for pod${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')} (none of ${f.names.join(', ')} has a series with that pod label)`
        );
    }
    const scrapeIntervalS = this.scrapeMs / 1000;
    const lookup: EngineStateLookup = (_service, pod, atMs) => {
      const state: EngineState = { provenance: [] };
      const prov = (figure: Figure, metric: string, instantMs: number): void => {
        const p: EngineMetricProvenance = { figure, metric, instantMs, scrapeIntervalS };
        state.provenance.push(p);
      };
      for (const f of ENGINE_FIGURES) {
        const byName = data.get(f.figure)?.get(pod);
        if (!byName) continue;
        if (f.figure === 'prefixCacheHitRate') {
          const rate = prefixRate(byName, atMs);
          if (rate) {
            state.prefixCacheHitRate = rate.value;
            prov(f.figure, rate.metric, rate.instantMs);
          }
          continue;
        }
        const name = f.names.find((n) => byName.has(n));
        if (!name) continue;
        const pts = byName.get(name)!;
        if (f.type === 'gauge') {
          const p = at(pts, atMs);
          if (!p) continue;
          state[f.figure as 'waiting' | 'running' | 'kvCacheUsage'] = p[1];
          prov(f.figure, name, p[0]);
        } else {
          const inc = increase(pts, atMs - COUNTER_WINDOW_MS, atMs);
          if (!inc) continue;
          state.preemptionsPerMin = Math.round((inc.inc / (inc.ms / 60_000)) * 100) / 100;
          prov(f.figure, name, at(pts, atMs)![0]);
        }
      }
      return state.provenance.length ? state : undefined;
    };
    return { lookup, missing, queries };
  }
}

/** Hits ÷ queries over the minute before `atMs` (new names, then old), else a hit-rate gauge. */
function prefixRate(
  byName: Map<string, Array<[number, number]>>,
  atMs: number
): { value: number; metric: string; instantMs: number } | undefined {
  for (const [hits, queries] of [
    ['vllm:prefix_cache_hits_total', 'vllm:prefix_cache_queries_total'],
    ['vllm:gpu_prefix_cache_hits_total', 'vllm:gpu_prefix_cache_queries_total'],
  ]) {
    const h = byName.get(hits);
    const q = byName.get(queries);
    if (!h || !q) continue;
    const dh = increase(h, atMs - COUNTER_WINDOW_MS, atMs);
    const dq = increase(q, atMs - COUNTER_WINDOW_MS, atMs);
    if (!dh || !dq || dq.inc <= 0) return undefined;
    return {
      value: Math.round(Math.min(1, dh.inc / dq.inc) * 1000) / 1000,
      metric: `${hits} ÷ ${queries}`,
      instantMs: at(q, atMs)![0],
    };
  }
  for (const g of ['sglang:cache_hit_rate', 'vllm:gpu_prefix_cache_hit_rate']) {
    const pts = byName.get(g);
    const p = pts && at(pts, atMs);
    if (p) return { value: p[1], metric: g, instantMs: p[0] };
  }
  return undefined;
}
