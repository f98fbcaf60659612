/**
 * Regression gates for CI: `--max-regression 'p99_ms:+10%,ttft_p99_ms:+15%,error_rate:+0.01'` against a baseline
 * run. `+` bounds how much a figure may rise (latencies, error rates), `-` how much it may fall (rps, goodput,
 * recall); `%` is relative to the baseline, otherwise absolute. A figure the baseline lacks is not judged (pass, said
 * in the table); a figure this run lacks while the baseline has it fails. `fallback_completion` is judged within the
 * run: the fall-back path's agent-task completion against the primary path's (contract/fallback.ts), no baseline needed.
 */
import { judgeFallbackCompletion, WITHIN_RUN_METRICS } from '../../../contract/fallback';
import type { ClientSummary, RegressionVerdict } from '../../../contract/runs';
import { REGRESSION_RULE_RE, THRESHOLD_METRICS, type ThresholdMetric } from '../../../contract/scenario';
import { thresholdValue } from './thresholds';

export interface RegressionRule {
  metric: ThresholdMetric;
  direction: '+' | '-';
  amount: number;
  relative: boolean;
  allowed: string;
}

export function parseMaxRegression(text: string): RegressionRule[] {
  const rules: RegressionRule[] = [];
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = REGRESSION_RULE_RE.exec(part);
    if (!m)
      throw new Error(
        `bad regression rule ${JSON.stringify(part)}: expected <metric>:+<n>% or <metric>:+<n>, e.g. p99_ms:+10%`
      );
    if (!(m[1] in THRESHOLD_METRICS))
      throw new Error(`unknown regression metric ${m[1]}; allowed: ${Object.keys(THRESHOLD_METRICS).join(', ')}`);
    rules.push({
      metric: m[1] as ThresholdMetric,
      direction: m[2] as '+' | '-',
      amount: Number(m[3]),
      relative: m[4] === '%',
      allowed: `${m[2]}${m[3]}${m[4]}`,
    });
  }
  if (!rules.length) throw new Error('--max-regression needs at least one rule, e.g. p99_ms:+10%');
  return rules;
}

const EPS = 1e-9;
const r6 = (v: number): number => Number(v.toPrecision(6));

/** The rule compares two figures of the same run (no baseline run needed). */
export const withinRun = (rule: Pick<RegressionRule, 'metric'>): boolean => WITHIN_RUN_METRICS.includes(rule.metric);

function judgeWithinRun(rule: RegressionRule, run: ClientSummary): RegressionVerdict {
  const j = judgeFallbackCompletion(rule, run.fallback);
  const delta = j.primary !== null && j.fallback !== null ? r6(j.fallback - j.primary) : null;
  return {
    metric: rule.metric,
    allowed: rule.allowed,
    baseline: j.primary !== null ? r6(j.primary) : null,
    actual: j.fallback !== null ? r6(j.fallback) : null,
    delta,
    deltaRatio: delta !== null && j.primary ? r6(delta / j.primary) : null,
    pass: j.pass,
    versus: 'primary_path',
  };
}

/** Judges each rule: against the baseline run's summary, or within this run (withinRun); no baseline, no cross-run rule. */
export function judgeRegressions(
  rules: RegressionRule[],
  baseline: ClientSummary | undefined,
  run: ClientSummary
): RegressionVerdict[] {
  return rules.flatMap((rule) => {
    if (withinRun(rule)) return [judgeWithinRun(rule, run)];
    if (!baseline) return [];
    const b = thresholdValue(baseline, rule.metric);
    const a = thresholdValue(run, rule.metric);
    const known = (v: number | null): v is number => v !== null && Number.isFinite(v);
    const delta = known(a) && known(b) ? r6(a - b) : null;
    const deltaRatio = delta !== null && b !== 0 && known(b) ? r6(delta / b) : null;
    let pass: boolean;
    if (!known(b)) pass = true;
    else if (!known(a)) pass = false;
    else {
      const slack = rule.relative ? (Math.abs(b) * rule.amount) / 100 : rule.amount;
      pass = rule.direction === '+' ? a - b <= slack + EPS : b - a <= slack + EPS;
    }
    return [
      {
        metric: rule.metric,
        allowed: rule.allowed,
        baseline: known(b) ? b : null,
        actual: known(a) ? a : null,
        delta,
        deltaRatio,
        pass,
      },
    ];
  });
}

/** "p99_ms rose 23.4% (812 → 1002 ms), allowed +10%". */
export function describeRegression(v: RegressionVerdict): string {
  if (v.versus === 'primary_path') {
    if (v.actual === null) return `${v.metric}: not judged, no agent task was answered on the fall-back path`;
    if (v.baseline === null) return `${v.metric}: not judged, no agent task was answered on the primary path`;
    const by = v.deltaRatio !== null ? `${Math.abs(v.deltaRatio * 100).toFixed(1)}%` : `by ${Math.abs(v.delta!)}`;
    const change = v.delta === 0 ? 'the same as' : `${v.delta! > 0 ? `${by} above` : `${by} below`}`;
    return `${v.metric} ${r6(v.actual)} on the fall-back path, ${change} the primary path's ${r6(v.baseline)}, allowed ${v.allowed}: ${v.pass ? 'pass' : 'REGRESSED'}`;
  }
  if (v.baseline === null) return `${v.metric}: not judged, the baseline has no figure`;
  if (v.actual === null) return `${v.metric}: this run has no figure (baseline ${v.baseline}), allowed ${v.allowed}`;
  const change =
    v.delta === 0
      ? 'unchanged'
      : `${v.delta! > 0 ? 'rose' : 'fell'} ${v.deltaRatio !== null ? `${Math.abs(v.deltaRatio * 100).toFixed(1)}%` : `by ${Math.abs(v.delta!)}`}`;
  return `${v.metric} ${change} (${r6(v.baseline)} → ${r6(v.actual)}), allowed ${v.allowed}: ${v.pass ? 'pass' : 'REGRESSED'}`;
}
