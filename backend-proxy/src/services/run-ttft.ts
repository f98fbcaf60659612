/**
 * Client vs server time to first token of one load-test run, over the run's window, from Prometheus:
 *  - client: what `hopscope-load` measured (`hopscope_load_time_to_first_token_seconds{run_id}`; its counters start at
 *    the run's start, so their last value in the window is the run's total, exact as scraped);
 *  - caller: what the LLM's caller measured (`gen_ai_client_operation_time_to_first_chunk_seconds{gen_ai_provider_name
 *    ="vllm"}`, the OpenTelemetry GenAI client metric our gateway exports; absent elsewhere, then this layer is left out);
 *  - server: vLLM's own `vllm:time_to_first_token_seconds` (arrival in the engine → first token), with its
 *    `vllm:request_queue_time_seconds` (WAITING) and `vllm:request_prefill_time_seconds` (scheduled → first token).
 * The long-lived counters (caller, server) are read as `increase()` over the window. Percentiles are estimated from the
 * buckets (linear interpolation, as histogram_quantile); means come from `_sum`/`_count`, and only means are split into
 * parts: client mean = (client − caller) + (caller − server) + queue + prefill + the server's remainder. A part no
 * metric times is a remainder and says so (`measured: false`), named for what lies between the two clocks.
 */
import type {
  RunRecord,
  RunTtftAnswer,
  SourceStatus,
  TtftGapPart,
  TtftLayer,
  TtftLayerName,
  WindowHistogram,
} from '../../../contract';
import { DomainError, notFound } from '../domain/errors';
import { settle } from '../sources/http';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';
import { DEFAULT_SCRAPE_MS, promDuration, rateIntervalMs } from './promql';

export interface RunTtftLookup {
  get(runId: string): Promise<RunRecord | undefined>;
}

/** Points of the P50/P99 series over the window (at most; the step never goes under the scrape interval). */
const MAX_POINTS = 120;

interface HistogramPlan {
  layer: TtftLayerName;
  label: string;
  covers: string;
  metric: string;
  /** The bucket series (with matchers), e.g. `vllm:time_to_first_token_seconds_bucket`. */
  selector: (suffix: '_bucket' | '_sum' | '_count') => string;
  /** How the window's total is read: the last value (series that start with the run) or increase() (long-lived). */
  total: 'last' | 'increase';
}

/** A PromQL string literal (run ids are validated by the contract; escaped anyway). */
const lit = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

function plans(runId: string): HistogramPlan[] {
  const run = `{run_id=${lit(runId)}}`;
  return [
    {
      layer: 'client',
      label: 'Client (hopscope-load)',
      metric: 'hopscope_load_time_to_first_token_seconds',
      total: 'last',
      covers: 'request sent → first chunk, at the load generator',
      selector: (s) => `hopscope_load_time_to_first_token_seconds${s}${run}`,
    },
    {
      layer: 'caller',
      label: 'Gateway (GenAI client metric)',
      metric: 'gen_ai_client_operation_time_to_first_chunk_seconds',
      total: 'increase',
      covers: 'chat call sent → first chunk from vLLM, at the gateway',
      selector: (s) => `gen_ai_client_operation_time_to_first_chunk_seconds${s}{gen_ai_provider_name="vllm"}`,
    },
    {
      layer: 'server',
      label: 'vLLM',
      metric: 'vllm:time_to_first_token_seconds',
      total: 'increase',
      covers: "arrival in vLLM's engine → first token (queue and prefill included)",
      selector: (s) => `vllm:time_to_first_token_seconds${s}`,
    },
    {
      layer: 'server_queue',
      label: 'vLLM queue (WAITING)',
      metric: 'vllm:request_queue_time_seconds',
      total: 'increase',
      covers: 'arrival in the engine → scheduled',
      selector: (s) => `vllm:request_queue_time_seconds${s}`,
    },
    {
      layer: 'server_prefill',
      label: 'vLLM prefill',
      metric: 'vllm:request_prefill_time_seconds',
      total: 'increase',
      covers: 'scheduled → first token',
      selector: (s) => `vllm:request_prefill_time_seconds${s}`,
    },
  ];
}

/** Cumulative buckets `[le, count]` (sorted, +Inf last) → the q-quantile, as Prometheus' histogram_quantile. */
export function bucketQuantile(q: number, buckets: Array<[number, number]>): number | null {
  const b = buckets.map(([le, c]): [number, number] => [le, c]).sort((x, y) => x[0] - y[0]);
  if (b.length < 2 || b[b.length - 1][0] !== Infinity) return null;
  // increase() extrapolates each bucket series on its own (towards zero when a series starts in the window), so a
  // bucket can come out above the next; histogram_quantile raises every bucket to the highest count below it first.
  for (let i = 1; i < b.length; i++) if (b[i][1] < b[i - 1][1]) b[i][1] = b[i - 1][1];
  const total = b[b.length - 1][1];
  if (!(total > 0)) return null;
  const rank = q * total;
  let i = b.findIndex(([, c]) => c >= rank);
  if (i < 0) i = b.length - 1;
  // In the +Inf bucket: the highest finite bound is the best estimate, as histogram_quantile answers.
  if (b[i][0] === Infinity) return b[b.length - 2][0];
  const lower = i === 0 ? 0 : b[i - 1][0];
  const below = i === 0 ? 0 : b[i - 1][1];
  const inBucket = b[i][1] - below;
  if (inBucket <= 0) return b[i][0];
  return lower + (b[i][0] - lower) * ((rank - below) / inBucket);
}

const ms = (s: number | null): number | null => (s === null || !Number.isFinite(s) ? null : Math.round(s * 1e6) / 1e3);
const sub = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null || b == null ? null : Math.round((a - b) * 1000) / 1000;

export class RunTtftService {
  constructor(
    private runs: RunTtftLookup,
    private prometheus: PrometheusSource | undefined,
    private scrapeMs = DEFAULT_SCRAPE_MS
  ) {}

  async ttft(runId: string, now = Date.now()): Promise<RunTtftAnswer> {
    const run = await this.runs.get(runId);
    if (!run) throw notFound(`run ${runId} not found`);
    if (!this.prometheus)
      throw new DomainError(
        'unavailable',
        'no Prometheus configured (HOPSCOPE_PROMETHEUS_URL): the client and server TTFT histograms live there',
        { code: 'prometheus_unavailable' }
      );
    const prom = this.prometheus;
    const from = run.startMs;
    const to = Math.min(now, run.endMs ?? now);
    const windowMs = Math.max(to - from, this.scrapeMs);
    const stepMs = Math.max(this.scrapeMs, Math.ceil(windowMs / MAX_POINTS / 1000) * 1000);
    // The worker's last scrape comes a little after its end (it waits for one): read the client's totals then.
    const clientAt = Math.min(now, to + 3 * this.scrapeMs);
    const w = promDuration(windowMs);
    const rateW = promDuration(rateIntervalMs(stepMs, this.scrapeMs));
    const missing: string[] = [];
    const coarse: string[] = [];
    const layers: TtftLayer[] = [];
    const series: RunTtftAnswer['series'] = [];
    const status = await settle('prometheus', async () => {
      const ps = plans(runId);
      const totals = ps.map((p) => {
        const at = p.total === 'last' ? clientAt : to;
        const range = p.total === 'last' ? promDuration(clientAt - from + this.scrapeMs) : w;
        const agg = (s: '_bucket' | '_sum' | '_count') =>
          p.total === 'last' ? `max_over_time(${p.selector(s)}[${range}])` : `increase(${p.selector(s)}[${range}])`;
        const buckets = `sum by (le) (${agg('_bucket')})`;
        const mean = `sum(${agg('_sum')}) / sum(${agg('_count')})`;
        return Promise.all([prom.query(buckets, at), prom.query(mean, at)]).then(([b, m]) => ({ p, buckets, b, m }));
      });
      const overTime = ps
        .filter((p) => p.layer === 'client' || p.layer === 'server')
        .flatMap((p) =>
          (['p50', 'p99'] as const).map((stat) => {
            const query = `histogram_quantile(${stat === 'p50' ? '0.5' : '0.99'}, sum by (le) (rate(${p.selector('_bucket')}[${rateW}])))`;
            return prom.queryRange(query, from, to, stepMs).then((s) => ({ layer: p.layer, stat, query, s }));
          })
        );
      const [t, o] = await Promise.all([Promise.all(totals), Promise.all(overTime)]);
      for (const { p, buckets, b, m } of t) {
        const figures = histogramFigures(p.metric, buckets, b, m);
        const first = firstBoundMs(b);
        if (figures && first !== null && figures.p99Ms !== null && figures.p99Ms <= first)
          coarse.push(
            `${p.metric}: P99 lies in the histogram's first bucket (≤ ${first} ms), so it is only a bound; its mean is exact`
          );
        if (!figures)
          missing.push(
            `${p.metric}: no ${p.layer === 'client' ? `series for run ${runId}` : 'requests'} in the run's window`
          );
        // The caller layer exists only where the caller exports the GenAI client metric: without it, say nothing more.
        if (figures || p.layer !== 'caller') layers.push({ layer: p.layer, label: p.label, covers: p.covers, figures });
      }
      for (const x of o) {
        series.push({
          layer: x.layer,
          stat: x.stat,
          query: x.query,
          points: (x.s[0]?.points ?? []).map(([tt, v]) => [tt, ms(v)]),
        });
      }
    });
    const sources: SourceStatus[] = [status.status];
    if (!status.status.ok) missing.push(`prometheus: ${status.status.error ?? 'unavailable'}`);
    const fig = (l: TtftLayerName): WindowHistogram | null => layers.find((x) => x.layer === l)?.figures ?? null;
    const client = fig('client');
    const server = fig('server');
    return {
      runId,
      from,
      to,
      stepMs,
      layers,
      series,
      missing,
      sources,
      gap: {
        meanMs: sub(client?.meanMs, server?.meanMs),
        p99DifferenceMs: sub(client?.p99Ms, server?.p99Ms),
        parts: gapParts(client, fig('caller'), server, fig('server_queue'), fig('server_prefill')),
      },
      notes: [...notesFor(run), ...coarse],
    };
  }
}

/** Count, mean and percentiles of a by-le bucket vector (seconds) and its mean, in ms; null when it counted nothing. */
function histogramFigures(
  metric: string,
  query: string,
  buckets: PromSeries[],
  mean: PromSeries[]
): WindowHistogram | null {
  const b: Array<[number, number]> = buckets
    .map((s) => [s.metric.le === '+Inf' ? Infinity : Number(s.metric.le), s.points[0]?.[1] ?? NaN] as [number, number])
    .filter(([le, c]) => !Number.isNaN(le) && Number.isFinite(c));
  const count = b.find(([le]) => le === Infinity)?.[1] ?? null;
  if (!count || count <= 0) return null;
  return {
    metric,
    query,
    count: Math.round(count * 1000) / 1000,
    meanMs: ms(mean[0]?.points[0]?.[1] ?? null),
    p50Ms: ms(bucketQuantile(0.5, b)),
    p90Ms: ms(bucketQuantile(0.9, b)),
    p99Ms: ms(bucketQuantile(0.99, b)),
  };
}

/** The lowest finite bucket bound, in ms (percentiles below it are interpolated from 0 and mean little). */
function firstBoundMs(buckets: PromSeries[]): number | null {
  const les = buckets
    .map((s) => Number(s.metric.le))
    .filter((x) => Number.isFinite(x))
    .sort((x, y) => x - y);
  return les.length ? ms(les[0]) : null;
}

/** The client's mean TTFT, part by part: remainders between clocks, then what vLLM's own metrics time. */
export function gapParts(
  client: WindowHistogram | null,
  caller: WindowHistogram | null,
  server: WindowHistogram | null,
  queue: WindowHistogram | null,
  prefill: WindowHistogram | null
): TtftGapPart[] {
  const parts: TtftGapPart[] = [];
  if (caller) {
    parts.push({
      part: 'before_caller',
      side: 'gap',
      measured: false,
      source: 'client mean − caller mean',
      meanMs: sub(client?.meanMs, caller.meanMs),
      label: 'Before the LLM call: network client ↔ gateway, the gateway, embedding, vector cache, RAG',
    });
    parts.push({
      part: 'caller_to_server',
      side: 'gap',
      measured: false,
      source: 'caller mean − vLLM mean',
      meanMs: sub(caller.meanMs, server?.meanMs),
      label: "Gateway → vLLM: network, vLLM's HTTP front end, tokenization",
    });
  } else {
    parts.push({
      part: 'before_server',
      side: 'gap',
      measured: false,
      source: 'client mean − vLLM mean',
      meanMs: sub(client?.meanMs, server?.meanMs),
      label: "Before vLLM's clock: network, gateway, the hops before the LLM, tokenization",
    });
  }
  if (server) {
    parts.push({
      part: 'server_queue',
      side: 'server',
      measured: queue !== null,
      source: 'vllm:request_queue_time_seconds',
      meanMs: queue?.meanMs ?? null,
      label: 'vLLM queue (WAITING, before scheduling)',
    });
    parts.push({
      part: 'server_prefill',
      side: 'server',
      measured: prefill !== null,
      source: 'vllm:request_prefill_time_seconds',
      meanMs: prefill?.meanMs ?? null,
      label: 'vLLM prefill up to the first token',
    });
    parts.push({
      part: 'server_other',
      side: 'server',
      measured: false,
      source: 'vLLM TTFT − queue − prefill',
      meanMs: queue && prefill ? sub(sub(server.meanMs, queue.meanMs), prefill.meanMs) : null,
      label: "Rest of vLLM's TTFT (scheduling, detokenizing)",
    });
  }
  return parts;
}

/** Who each histogram counted, so the two sides are weighed for what they are. */
function notesFor(run: RunRecord): string[] {
  const scenario = (run.options as { scenario?: { target?: { backend?: string }; routes?: { agent?: number } } })
    .scenario;
  const notes = [
    "vLLM's histograms count every request it served in the window (other clients' too); the client's count only this run's requests.",
    "Percentiles are estimated from the histograms' buckets; only means are split into parts (percentiles do not add up).",
  ];
  const backend = scenario?.target?.backend;
  if (backend && backend !== 'vllm')
    notes.push(
      `This run's backend is "${backend}": the client's figures include requests vLLM never saw (TGI has no TTFT histogram).`
    );
  if ((scenario?.routes?.agent ?? 0) > 0)
    notes.push(
      'Agent requests make several vLLM calls (plan, answer): vLLM counts each, the client one TTFT per request.'
    );
  return notes;
}
