/**
 * Built RCA baselines, per proxy instance, for a few seconds: a user clicking through slow traces pays for one build.
 * The per-trace answer reads only the statistics (`baselineStats`; the chronic background level is for window RCA),
 * which the embedded store serves from per-trace samples it precomputes on ingest. A source that can only hand over
 * spans (Tempo: a search per operation) is served stale-while-revalidate: an entry past its TTL but younger than
 * STALE_MS is returned at once and refreshed in the background, so a re-click never waits on Tempo.
 */
import { baselineStats, type Baseline } from '../rca';
import type { TraceSource } from '../sources/traces';

type OperationKey = { service: string; name: string };
interface CacheEntry {
  at: number;
  value?: Baseline;
  refreshing?: Promise<Baseline | undefined>;
}

const TTL_MS = 10_000;
const STALE_MS = 60_000;
const MAX_ENTRIES = 100;

export class BaselineCache {
  private entries = new Map<string, CacheEntry>();

  constructor(private source: TraceSource) {}

  get(keys: OperationKey[], traceId: string, beforeMs: number): Promise<Baseline | undefined> {
    const c = this.entries;
    const key = `${keys
      .map((k) => `${k.service}\u0000${k.name}`)
      .sort()
      .join('\u0001')}|${Math.floor(beforeMs / 5000)}`;
    const now = Date.now();
    const hit = c.get(key);
    const build = (): Promise<Baseline | undefined> => {
      const p = this.fetch(keys, traceId, beforeMs);
      const entry: CacheEntry =
        hit && 'value' in hit ? { at: hit.at, value: hit.value, refreshing: p } : { at: now, refreshing: p };
      if (c.size > MAX_ENTRIES && !c.has(key)) c.clear();
      c.set(key, entry);
      p.then(
        (value) => {
          if (c.get(key) === entry) c.set(key, { at: Date.now(), value });
        },
        () => {
          if (c.get(key) === entry) c.delete(key);
        }
      );
      return p;
    };
    const age = hit && 'value' in hit ? now - hit.at : Infinity;
    if (age < TTL_MS) return Promise.resolve(hit!.value);
    // Spans-only sources (Tempo): a not too old entry answers at once while one refresh runs in the background.
    if (age < STALE_MS && !this.source.baselineStats) {
      if (!hit!.refreshing)
        build().catch(() => {
          /* the next click retries and reports */
        });
      return Promise.resolve(hit!.value);
    }
    // One build per key at a time: concurrent clicks share it.
    return hit?.refreshing ?? build();
  }

  private async fetch(keys: OperationKey[], traceId: string, beforeMs: number): Promise<Baseline | undefined> {
    if (this.source.baselineStats) return this.source.baselineStats(keys, traceId, beforeMs);
    const spans = await this.source.baseline(keys, traceId, beforeMs);
    return spans.length ? baselineStats(spans) : undefined;
  }
}
