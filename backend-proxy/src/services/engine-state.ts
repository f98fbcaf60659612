/**
 * The inference engines' state on their pods at given instants, from their own metrics in Prometheus, for the root
 * cause's LLM phases: requests waiting and running, KV-cache usage, preemptions per minute, prefix-cache hit rate.
 * One range query per figure for the whole answer, however many pods and instants: every engine's name for the figure
 * (old and new vLLM releases, SGLang, TGI) in one `{__name__=~"…", pod=~"a|b"}` selector, so the series say which
 * name was found (the provenance). A figure no engine on the pod exposes is absent and said in `missing`, never 0.
 * Names and how each figure is made of them: `ENGINE_STATE_METRICS` and the alias table of contract/engines.
 */
import {
  ENGINE_STATE_METRICS,
  type EngineFigure,
  type EngineFigureSource,
  type EngineMetricProvenance,
  type EngineName,
  type EngineState,
} from '../../../contract';
import type { EngineStateLookup } from '../rca';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';

const FIGURES: readonly EngineFigure[] = [
  'waiting',
  'running',
  'kvCacheUsage',
  'preemptionsPerMin',
  'prefixCacheHitRate',
];
const ENGINES = Object.keys(ENGINE_STATE_METRICS) as EngineName[];

const LABEL: Record<EngineFigure, string> = {
  waiting: 'requests waiting',
  running: 'requests running',
  kvCacheUsage: 'KV-cache usage',
  preemptionsPerMin: 'preemptions',
  prefixCacheHitRate: 'prefix-cache hit rate',
};

const namesOf = (src: EngineFigureSource): readonly string[] =>
  src.kind === 'gauge' || src.kind === 'counter_per_min' ? src.metric : [...src.numerator, ...src.denominator];

/** Every engine's names (with their aliases) for a figure: one selector, one query. */
export function figureMetricNames(f: EngineFigure): string[] {
  const out = new Set<string>();
  for (const e of ENGINES) {
    const src = ENGINE_STATE_METRICS[e][f];
    if (src) for (const n of namesOf(src)) out.add(n);
  }
  return [...out];
}

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
    const data = new Map<EngineFigure, Samples>();
    let queries = 0;
    await Promise.all(
      FIGURES.map(async (f) => {
        const names = figureMetricNames(f);
        const q = `{__name__=~${lit(names.map(reEscape).join('|'))}, pod=~${lit(podRe)}}`;
        queries++;
        try {
          data.set(f, collect(await prom.queryRange(q, from, to, stepMs), f === 'kvCacheUsage'));
        } catch (err) {
          missing.push(`engine state: ${LABEL[f]} could not be read from Prometheus: ${(err as Error).message}`);
        }
      })
    );
    // What each pod lacks, said once per figure.
    for (const f of FIGURES) {
      const got = data.get(f);
      if (!got) continue;
      const lacking = pods.filter((p) => !got.get(p)?.size);
      if (lacking.length)
        missing.push(
          `engine state: no ${LABEL[f]} for pod${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')} (none of ${figureMetricNames(f).join(', ')} has a series with that pod label)`
        );
    }
    const scrapeIntervalS = this.scrapeMs / 1000;
    const lookup: EngineStateLookup = (_service, pod, atMs) => {
      const state: EngineState = { provenance: [] };
      for (const f of FIGURES) {
        const byName = data.get(f)?.get(pod);
        if (!byName) continue;
        // The first engine whose names the pod exposes for this figure.
        for (const e of ENGINES) {
          const src = ENGINE_STATE_METRICS[e][f];
          const v = src && figureAt(src, byName, atMs);
          if (!v) continue;
          state[f] = v.value;
          const p: EngineMetricProvenance = { figure: f, metric: v.metric, instantMs: v.instantMs, scrapeIntervalS };
          state.provenance.push(p);
          break;
        }
      }
      return state.provenance.length ? state : undefined;
    };
    return { lookup, missing, queries };
  }
}

/** A figure at `atMs` from one engine's source, the first of its aliases the pod has (old/new pairs by position). */
function figureAt(
  src: EngineFigureSource,
  byName: Map<string, Array<[number, number]>>,
  atMs: number
): { value: number; metric: string; instantMs: number } | undefined {
  if (src.kind === 'gauge' || src.kind === 'counter_per_min') {
    const name = src.metric.find((n) => byName.has(n));
    if (!name) return undefined;
    const pts = byName.get(name)!;
    const p = at(pts, atMs);
    if (!p) return undefined;
    if (src.kind === 'gauge') return { value: p[1], metric: name, instantMs: p[0] };
    const inc = increase(pts, atMs - COUNTER_WINDOW_MS, atMs);
    if (!inc) return undefined;
    return { value: Math.round((inc.inc / (inc.ms / 60_000)) * 100) / 100, metric: name, instantMs: p[0] };
  }
  for (let k = 0; k < src.numerator.length; k++) {
    const num = byName.get(src.numerator[k]);
    const den = byName.get(src.denominator[k] ?? src.denominator[0]);
    if (!num || !den) continue;
    const metric = `${src.numerator[k]} ÷ ${src.denominator[k] ?? src.denominator[0]}`;
    const d = at(den, atMs);
    if (!d) return undefined;
    if (src.kind === 'gauge_ratio') {
      const n = at(num, atMs);
      return n && d[1] > 0 ? { value: Math.round((n[1] / d[1]) * 1000) / 1000, metric, instantMs: d[0] } : undefined;
    }
    const dn = increase(num, atMs - COUNTER_WINDOW_MS, atMs);
    const dd = increase(den, atMs - COUNTER_WINDOW_MS, atMs);
    if (!dn || !dd || dd.inc <= 0) return undefined;
    return { value: Math.round(Math.min(1, dn.inc / dd.inc) * 1000) / 1000, metric, instantMs: d[0] };
  }
  return undefined;
}
