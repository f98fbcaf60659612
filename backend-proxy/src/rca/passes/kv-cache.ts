/**
 * KV cache: an on-path LLM span whose KV/prefix-cache hit rate fell to ≤ ¼ of its operation's healthy median
 * (itself ≥ 5%) is degraded before the latency shows (thrash, eviction; e.g. when it is idle). Worth ≤ KV_DROP_SCORE:
 * small next to any latency excess or error, so it only decides among hops that show nothing else.
 */
import { kvCacheHitRateOfSpan } from '../../../../contract';
import { type TraceAccount, opAt } from '../account';
import { round } from '../format';

const KV_DROP_SCORE = 0.05;

export function kvCache(a: TraceAccount): void {
  const { spans } = a;
  for (const i of a.path) {
    const s = spans[i];
    if (s.kind === 'client') continue;
    const b = opAt(a, i);
    if (!b?.kvHit || b.kvHit.count < 5 || b.kvHit.median < 0.05) continue;
    const kv = kvCacheHitRateOfSpan(s);
    if (kv === undefined || kv > 0.25 * b.kvHit.median) continue;
    const h = a.bookedOn[i]!;
    const drop = KV_DROP_SCORE * (1 - Math.max(0, kv) / b.kvHit.median);
    if (drop <= h.degradation) continue;
    h.degradation = drop;
    h.spanId ??= s.spanId;
    h.operation ??= s.name;
    h.evidence.push({
      kind: 'kv_cache_drop',
      summary: `${s.service} "${s.name}": KV-cache hit rate ${(kv * 100).toFixed(0)}% vs ${(b.kvHit.median * 100).toFixed(0)}% usually (median of ${b.kvHit.count} healthy): the cache is being evicted or thrashing`,
      spanId: s.spanId,
      hitRate: round(kv),
      baselineHitRate: round(b.kvHit.median),
    });
  }
}
