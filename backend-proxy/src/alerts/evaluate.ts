/**
 * Composite alert rules (seed 4.3), evaluated as a pure function: metric thresholds (instant PromQL results),
 * kernel-event counts with "N consecutive" or "at least N", and co-occurrence of the kernel matches within a window.
 * Example: 3 consecutive TLS handshakes > 500 ms on a pod AND a GPU allocation failure within 5 s.
 */
import type { AlertCondition, AlertRule, KernelEvent } from '../../../contract';
import type { PromSeries } from '../sources/prometheus';

interface Verdict {
  firing: boolean;
  atMs?: number;
  pod?: string;
  summary: string;
  unknown?: string;
}

type KernelCond = Extract<AlertCondition, { kind: 'kernel' }>;
type MetricCond = Extract<AlertCondition, { kind: 'metric' }>;

/** Instants (with pod) at which a kernel condition is met: the ts of the event completing the run/count. */
export function kernelMatches(c: KernelCond, events: KernelEvent[]): Array<{ ts: number; pod?: string }> {
  const byPod = new Map<string, KernelEvent[]>();
  for (const e of events) {
    if (e.type !== c.type) continue;
    if (c.pod && e.pod !== c.pod) continue;
    const k = e.pod ?? '';
    const l = byPod.get(k);
    if (l) l.push(e);
    else byPod.set(k, [e]);
  }
  const out: Array<{ ts: number; pod?: string }> = [];
  const ok = (e: KernelEvent): boolean => c.minDurationMs === undefined || (e.durationMs ?? 0) > c.minDurationMs;
  for (const [pod, list] of byPod) {
    list.sort((a, b) => a.ts - b.ts);
    if (c.consecutive) {
      // A run of N events of this type on this pod, each over the threshold; a fast one in between breaks the run.
      let run = 0;
      for (const e of list) {
        run = ok(e) ? run + 1 : 0;
        if (run >= c.consecutive) out.push({ ts: e.ts, pod: pod || undefined });
      }
    } else {
      const need = c.atLeast ?? 1;
      let n = 0;
      for (const e of list) if (ok(e) && ++n >= need) out.push({ ts: e.ts, pod: pod || undefined });
    }
  }
  return out.sort((a, b) => a.ts - b.ts);
}

export function compare(v: number, op: MetricCond['op'], t: number): boolean {
  return op === '>' ? v > t : op === '>=' ? v >= t : op === '<' ? v < t : v <= t;
}

export function describeCondition(c: AlertCondition): string {
  if (c.kind === 'metric') return `${c.expr} ${c.op} ${c.threshold}`;
  const what = `${c.type}${c.minDurationMs !== undefined ? ` > ${c.minDurationMs} ms` : ''}${c.pod ? ` on ${c.pod}` : ''}`;
  return c.consecutive ? `${c.consecutive} consecutive ${what}` : `${c.atLeast ?? 1}× ${what}`;
}

/**
 * All conditions must hold. Kernel matches must co-occur: some instant of the first kernel condition has, for every
 * other kernel condition, a match within `withinMs`. Metric conditions hold "now" (latest instant-query value).
 */
export function evaluateRule(
  rule: AlertRule,
  input: { events: KernelEvent[]; metrics: Map<string, PromSeries[] | Error> }
): Verdict {
  const parts: string[] = [];
  for (const c of rule.conditions.filter((x): x is MetricCond => x.kind === 'metric')) {
    const r = input.metrics.get(c.expr);
    if (r === undefined || r instanceof Error)
      return {
        firing: false,
        summary: `${rule.name}: cannot evaluate`,
        unknown: r instanceof Error ? r.message : `no result for ${c.expr}`,
      };
    const hit = r.find((s) => {
      const v = s.points.at(-1)?.[1];
      return v !== null && v !== undefined && compare(v, c.op, c.threshold);
    });
    if (!hit) return { firing: false, summary: `${rule.name}: ${describeCondition(c)} does not hold` };
    parts.push(`${describeCondition(c)} (value ${hit.points.at(-1)?.[1]})`);
  }
  const kernel = rule.conditions.filter((x): x is KernelCond => x.kind === 'kernel');
  if (!kernel.length) return { firing: true, summary: `${rule.name}: ${parts.join(' and ')}` };
  const matches = kernel.map((c) => kernelMatches(c, input.events));
  if (matches.some((m) => !m.length))
    return {
      firing: false,
      summary: `${rule.name}: ${describeCondition(kernel[matches.findIndex((m) => !m.length)])} not seen`,
    };
  // Latest co-occurrence wins, so the alert points at the freshest evidence.
  for (let i = matches[0].length - 1; i >= 0; i--) {
    const anchor = matches[0][i];
    const others = matches.slice(1).map((m) => m.find((x) => Math.abs(x.ts - anchor.ts) <= rule.withinMs));
    if (others.every(Boolean)) {
      const summary = `${rule.name}: ${kernel.map(describeCondition).concat(parts).join(' and ')}${kernel.length > 1 ? ` within ${rule.withinMs / 1000} s` : ''}${anchor.pod ? ` on ${anchor.pod}` : ''}`;
      let atMs = anchor.ts;
      for (const o of others) if (o!.ts > atMs) atMs = o!.ts;
      return { firing: true, atMs, pod: anchor.pod ?? others.find((o) => o?.pod)?.pod, summary };
    }
  }
  return {
    firing: false,
    summary: `${rule.name}: conditions seen, but not within ${rule.withinMs / 1000} s of each other`,
  };
}

/** Kernel events one round reads at most (so a count above this can never be met). */
export const ROUND_MAX_EVENTS = 100_000;
/** Distinct PromQL expressions of one rule set: each is one instant query per round. */
export const MAX_METRIC_EXPRS = 100;

/**
 * The evaluator's acceptance of a rule set before it is stored: every rule is one it can evaluate, and a dry
 * evaluation of each (no events, no series) runs. Returns why not, or undefined when accepted. Loops only: a rule
 * set is never spread into a call.
 */
export function acceptRules(rules: AlertRule[]): string | undefined {
  const exprs = new Set<string>();
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i];
    const at = `rule #${i} ("${r.id}")`;
    for (const c of r.conditions) {
      if (c.kind === 'metric') {
        exprs.add(c.expr);
        continue;
      }
      if (c.consecutive !== undefined && c.atLeast !== undefined)
        return `${at}: a kernel condition takes consecutive or atLeast, not both`;
      const n = c.consecutive ?? c.atLeast ?? 1;
      if (n > ROUND_MAX_EVENTS)
        return `${at}: ${n} events can never be met (a round reads at most ${ROUND_MAX_EVENTS})`;
    }
    if (exprs.size > MAX_METRIC_EXPRS)
      return `more than ${MAX_METRIC_EXPRS} distinct metric expressions (each is a Prometheus query every round)`;
    const metrics = new Map<string, PromSeries[] | Error>();
    for (const c of r.conditions) if (c.kind === 'metric') metrics.set(c.expr, []);
    try {
      evaluateRule(r, { events: [], metrics });
    } catch (err) {
      return `${at}: the evaluator cannot run it (${(err as Error).message})`;
    }
  }
  return undefined;
}
