/**
 * The drill-down's third origin, `ingest-counters`: the embedded store's counters of every span received, scaled by
 * the sampling rates the spans recorded (../../store/request-counters).
 */
import { histQuantile, mergeHist, type CountsRow, type RequestCounters } from '../../store/request-counters';
import { nullableSec, pct, row, toMs, type KeyBy, type OriginFigures, type Scope } from '../figures';

/** The embedded store's counters of every span received. */
export function ingestCounters(
  counters: RequestCounters,
  scope: Scope,
  keyBy: KeyBy
): { figures: OriginFigures; notes: string[] } {
  const rows = counters.window(scope.range.from, scope.range.to, scope.service);
  const groups = new Map<string, CountsRow[]>();
  for (const r of rows) {
    const k = keyBy === 'service' ? r.service : r.pod;
    const l = groups.get(k);
    if (l) l.push(r);
    else groups.set(k, [r]);
  }
  const out: OriginFigures = new Map();
  for (const [k, list] of groups) {
    const req = list.some((r) => r.request) ? list.filter((r) => r.request) : list;
    const f = row(out, k);
    let requests = 0,
      errors = 0,
      spansCounted = 0,
      scaled = 0,
      errorSpans = 0,
      scaledErrors = 0,
      zero = 0;
    const hist = new Map<number, number>();
    for (const r of req) {
      requests += r.requests;
      errors += r.errors;
      spansCounted += r.spans;
      scaled += r.scaledSpans;
      errorSpans += r.errorSpans;
      scaledErrors += r.scaledErrors;
      zero += r.zero;
      mergeHist(hist, r.hist);
    }
    f.spans = list.reduce((n, r) => n + r.spans, 0);
    f.requests = requests;
    f.errors = errors;
    f.p50Ms = toMs(nullableSec(histQuantile(hist, zero, 0.5)));
    f.p99Ms = toMs(nullableSec(histQuantile(hist, zero, 0.99)));
    for (const r of list) f.pods.add(r.pod);
    f.node = list.find((r) => r.node)?.node;
    const kinds = list.some((r) => r.request) ? 'server/consumer spans' : 'all spans (the service has no server spans)';
    f.rate =
      scaled < 0.5
        ? {
            origin: 'ingest-counters',
            exact: true,
            note: `counted at ingest: every ${kinds.replace(/^all spans/, 'span')} the store received; none carried a sampling rate (a sampler that records none would make this undercount)`,
          }
        : {
            origin: 'ingest-counters',
            exact: false,
            note: `counted at ingest, ${pct(scaled, spansCounted)} of the ${kinds} scaled by the sampling rate recorded on them (hopscope.sampler.rate, hopscope.sampling.probability): an estimate`,
          };
    f.errorsOf =
      scaledErrors < 0.5
        ? {
            origin: 'ingest-counters',
            exact: true,
            note: "every failed span received: samplers keep failed requests (the chain's KeepErrorsSpanProcessor, the Collector's errors policy)",
          }
        : {
            origin: 'ingest-counters',
            exact: false,
            note: `${pct(scaledErrors, errorSpans)} of the failed spans scaled by the Collector's sampling probability`,
          };
    f.latency = {
      origin: 'ingest-counters',
      exact: false,
      note: 'from a histogram of every span received (2% wide buckets), sampled spans weighted by their recorded rate',
    };
  }
  const notes: string[] = [];
  const reach = Date.now() - counters.retentionMs;
  if (scope.range.from < reach)
    notes.push(
      `the ingest counters reach back ${Math.round(counters.retentionMs / 60_000)} min (HOPSCOPE_STORE_MAX_AGE_MS): requests before ${new Date(reach).toISOString()} are not counted`
    );
  return { figures: out, notes };
}
