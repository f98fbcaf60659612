/**
 * The capacity of a chain from one sweep or ramp run: pure, over the run's counted steps (client counters, exact) and
 * the hops' saturation signals (Prometheus series, read by the proxy; none when there is no proxy). Decisions:
 *  - a step **held its SLOs** when at least `sloAttainment` of its requests were good (the client decides per step);
 *    `maxGoodRps` is the highest offered rate of such a step;
 *  - the **knee** is the first step where achieved stops following offered (achieved < `follow` × offered over the
 *    step's settled half, by more than the count's noise 2√n + 1, or with every later step behind too, by more than
 *    their pooled count's noise), or where an engine's queue starts to grow (≥ 1 waiting two points in a row),
 *    whichever comes first;
 *  - the **bottleneck** is the signal that saturated first (at or above its limit for two points in a row), up to the
 *    end of the run; `next` is the next one on another hop or resource. An engine queue that grows while that
 *    engine's KV cache is at its limit is `kv_cache`; while its running count sits at its run's maximum (a plateau:
 *    the running-sequence limit) it is `running_limit`;
 *  - the driver **fell behind** when a step from the last one that held up to the knee sent > 5 % of its requests more than 10 ms late or used
 *    > 90 % of a core: then the capacity is a lower bound, and the note says why.
 */
import type { Bottleneck, Capacity, CapacityStep, SaturationSignal } from './capacity';

export interface CapacityOptions {
  /** Share of achieved over offered below which the chain no longer keeps up (default 0.9). */
  follow?: number;
  /** What could not be read (a source down, a metric absent), said in the note when it matters. */
  missing?: string[];
}

/** Share of a step's requests that must be good for its SLOs to hold (the client's per-step decision). */
export const SLO_ATTAINMENT = 0.95;
const LATE_SHARE = 0.05;
const DRIVER_CPU = 0.9;

const fmt = (v: number): string => (Math.abs(v) >= 10 ? v.toFixed(0) : Number(v.toFixed(2)).toString());

/** The first instant the signal sat at or above its limit for two points in a row (one point when it has one). */
function saturatedAt(s: SaturationSignal): { at: number; value: number } | null {
  const limit = s.limit ?? 1;
  const pts = s.points;
  for (let i = 0; i < pts.length; i++) {
    if (pts[i][1] < limit) continue;
    if (i + 1 < pts.length && pts[i + 1][1] < limit) continue;
    if (i + 1 === pts.length && pts.length > 1) continue;
    return { at: pts[i][0], value: pts[i][1] };
  }
  return null;
}

function valueAt(s: SaturationSignal | undefined, at: number): number | undefined {
  if (!s || !s.points.length) return undefined;
  let best = s.points[0];
  for (const p of s.points) if (Math.abs(p[0] - at) < Math.abs(best[0] - at)) best = p;
  return best[1];
}

const same = (a: SaturationSignal, b: SaturationSignal): boolean => a.service === b.service && a.pod === b.pod;

const UNIT: Record<string, (v: number) => string> = {
  engine_queue: (v) => `${fmt(v)} waiting`,
  kv_cache: (v) => `${(100 * v).toFixed(0)}% used`,
  cpu: (v) => `${(100 * v).toFixed(0)}% of a core`,
  gpu: (v) => `SM active ${(100 * v).toFixed(0)}%`,
  network: (v) => `${fmt(v)}/s`,
  running_limit: (v) => `${fmt(v)} running`,
};

/** The bottleneck a saturated signal stands for, with its evidence (an engine queue refined to KV cache / running limit). */
function describe(s: SaturationSignal, at: number, value: number, all: SaturationSignal[], t0: number): Bottleneck {
  const when = `${((at - t0) / 1000).toFixed(0)} s into the run`;
  const show = (UNIT[s.resource] ?? fmt)(value);
  if (s.resource === 'engine_queue') {
    const kv = all.find((x) => x.resource === 'kv_cache' && same(x, s));
    const kvv = valueAt(kv, at);
    if (kv && kvv !== undefined && kvv >= (kv.limit ?? 1))
      return {
        service: s.service,
        pod: s.pod,
        resource: 'kv_cache',
        evidence: `${s.metric} grew (${show}) ${when} while ${kv.metric} was ${(100 * kvv).toFixed(0)}%: the KV cache is full`,
      };
    const run = all.find((x) => x.resource === 'running_limit' && same(x, s));
    const rv = valueAt(run, at);
    if (run && rv !== undefined && run.points.length) {
      const max = Math.max(...run.points.map((p) => p[1]));
      const min = Math.min(...run.points.map((p) => p[1]));
      // A plateau the count rose to (a flat series says nothing about a limit).
      if (max > min && rv >= max)
        return {
          service: s.service,
          pod: s.pod,
          resource: 'running_limit',
          evidence: `${s.metric} grew (${show}) ${when} while ${run.metric} sat at its maximum ${fmt(max)}${kvv !== undefined ? ` and the KV cache had room (${(100 * kvv).toFixed(0)}%)` : ''}: the running-sequence limit`,
        };
    }
  }
  return {
    service: s.service,
    pod: s.pod,
    resource: s.resource,
    evidence: `${s.metric} reached ${show} (limit ${s.limit === null ? 1 : (UNIT[s.resource] ?? fmt)(s.limit)}) ${when}`,
  };
}

export function analyseCapacity(
  steps: readonly CapacityStep[],
  signals: readonly SaturationSignal[] = [],
  o: CapacityOptions = {}
): Capacity {
  const follow = o.follow ?? 0.9;
  const used = steps.filter((s) => s.sent > 0);
  const t0 = steps.length ? steps[0].startMs : 0;
  const top = used.length ? Math.max(...used.map((s) => s.offeredRps)) : 0;
  const held = used.filter((s) => s.sloHeld);
  const maxGoodRps = held.length ? Math.max(...held.map((s) => s.offeredRps)) : null;

  // The knee: the client's figures, or an engine queue that starts to grow.
  let knee: { step: CapacityStep; why: string } | null = null;
  // Counted over each step's settled half: a deficit within the count's own noise (2√n + 1) is not a knee. Short steps
  // (a ramp's windows) pool: a step behind, and every later one behind too, is a knee when their summed deficit is
  // beyond the summed count's noise.
  const behindFrom = (i: number): boolean => used.slice(i).every((x) => x.achievedRps < follow * x.offeredRps);
  const deficit = (xs: readonly CapacityStep[]) => {
    let expected = 0;
    let got = 0;
    for (const x of xs) {
      expected += (x.offeredRps * (x.endMs - x.startMs)) / 2000;
      got += (x.achievedRps * (x.endMs - x.startMs)) / 2000;
    }
    return expected - got > 2 * Math.sqrt(expected) + 1;
  };
  for (const [i, s] of used.entries()) {
    if (s.achievedRps < follow * s.offeredRps && (deficit([s]) || (behindFrom(i) && deficit(used.slice(i))))) {
      knee = {
        step: s,
        why: `achieved ${fmt(s.achievedRps)} req/s of ${fmt(s.offeredRps)} offered`,
      };
      break;
    }
    // An engine queue that first saturates (≥ 1 waiting two points in a row) inside this step.
    const q = signals
      .filter((x) => x.resource === 'engine_queue')
      .map((x) => ({ x, at: saturatedAt(x) }))
      .find((e) => e.at !== null && e.at.at >= s.startMs && e.at.at < s.endMs);
    if (q) {
      knee = {
        step: s,
        why: `${q.x.metric} on ${q.x.pod ?? q.x.service} reached ${fmt(q.at!.value)} waiting`,
      };
      break;
    }
  }

  // The driver falling behind where the figures are decided (from the last step that held up to the knee, or to the
  // end without one) makes them a lower bound; a slow start at a low rate decides nothing.
  const from = held.length
    ? Math.max(...held.filter((s) => !knee || s.index < knee.step.index).map((s) => s.index), 0)
    : 0;
  const upTo = used.filter((s) => s.index >= from && (!knee || s.index <= knee.step.index));
  const behind = upTo.find(
    (s) => s.lateOver10ms / s.sent > LATE_SHARE || (s.driverCpu !== null && s.driverCpu > DRIVER_CPU)
  );
  const notes: string[] = [];
  if (behind) {
    const why = [
      s(
        behind.lateOver10ms / behind.sent > LATE_SHARE,
        `${((100 * behind.lateOver10ms) / behind.sent).toFixed(1)}% of its sends left > 10 ms late`
      ),
      s(
        behind.driverCpu !== null && behind.driverCpu > DRIVER_CPU,
        `its CPU was ${(100 * (behind.driverCpu ?? 0)).toFixed(0)}% of a core`
      ),
    ].filter(Boolean);
    notes.push(
      `a lower bound: the load generator fell behind at ${fmt(behind.offeredRps)} req/s (${why.join(', ')}), so the chain may take more`
    );
  }

  let bottleneck: Bottleneck | null = null;
  let next: Bottleneck | null = null;
  if (knee) {
    // Whatever saturated first in the run (a signal is scraped, and lags the client's count by a scrape or two).
    const horizon = used[used.length - 1].endMs;
    const sat = signals
      .filter((x) => x.resource !== 'running_limit')
      .map((x) => ({ x, s: saturatedAt(x) }))
      .filter((e): e is { x: SaturationSignal; s: { at: number; value: number } } => e.s !== null && e.s.at <= horizon)
      .sort((a, b) => a.s.at - b.s.at);
    if (sat.length) {
      const first = sat[0];
      bottleneck = describe(first.x, first.s.at, first.s.value, [...signals], t0);
      const other = sat.find(
        (e) =>
          !(same(e.x, first.x) && e.x.resource === first.x.resource) &&
          !(e.x.service === first.x.service && e.x.pod === first.x.pod && bottleneck!.resource === e.x.resource)
      );
      if (other) next = describe(other.x, other.s.at, other.s.value, [...signals], t0);
    } else {
      bottleneck = {
        service: null,
        pod: null,
        resource: 'unknown',
        evidence: `${knee.why} at ${fmt(knee.step.offeredRps)} req/s, but no hop's saturation signal reached its limit${signals.length ? ` (${signals.length} read${closest(signals, knee.step.startMs, horizon)})` : ' (none read)'}`,
      };
    }
  } else if (used.length) {
    notes.push(`no knee up to ${fmt(top)} req/s`);
  }
  if (o.missing?.length) notes.push(`missing: ${o.missing.join('; ')}`);
  return {
    maxGoodRps,
    kneeRps: knee ? knee.step.offeredRps : null,
    kneeAtMs: knee ? knee.step.startMs : null,
    bottleneck,
    next,
    note: notes.length ? notes.join('; ') : null,
    lowerBound: behind !== undefined,
  };
}

/** The signal nearest its limit from the knee on (`; nearest: …`), so an undecided bottleneck still points somewhere. */
function closest(signals: readonly SaturationSignal[], from: number, to: number): string {
  let best: { x: SaturationSignal; v: number; share: number } | undefined;
  for (const x of signals) {
    if (x.limit === null || x.limit <= 0) continue;
    for (const [at, v] of x.points)
      if (at >= from && at <= to && (!best || v / x.limit > best.share)) best = { x, v, share: v / x.limit };
  }
  if (!best) return '';
  const show = UNIT[best.x.resource] ?? fmt;
  return `; nearest: ${best.x.metric} on ${best.x.pod ?? best.x.service} at ${show(best.v)} (limit ${show(best.x.limit!)})`;
}

function s(cond: boolean, text: string): string {
  return cond ? text : '';
}
