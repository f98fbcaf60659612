/**
 * Validation of a composite alert rule typed by a person: the contract's schema, then the mistakes the schema cannot
 * see (a kernel condition that says neither "N consecutive" nor "at least N", a duplicate id), each as one sentence
 * that names the field (`conditions[0].op: …`, written by the contract's formatter as every part writes zod issues);
 * and the rules of a file to import (the export's format, or `{rules}`).
 */
import { z } from 'zod';

import {
  AlertRule,
  formatZodError,
  formatZodIssue,
  TLS_SLOW_AND_GPU_OOM_RULE,
  type AlertCondition,
} from '../../contract';

/** One mistake: where (`conditions[1].type`, `(rule)` for the rule itself) and what, and both as one line. */
export interface RuleProblem {
  path: string;
  message: string;
  /** `path: message`, as the contract's `formatZodIssue` writes it. */
  text: string;
}

const ROOT = '(rule)';

function problem(path: readonly PropertyKey[], message: string): RuleProblem {
  const text = formatZodIssue({ path, message }, ROOT);
  return { path: text.slice(0, text.length - message.length - 2), message, text };
}

export type RuleValidation = { ok: true; rule: AlertRule } | { ok: false; problems: RuleProblem[] };

/** The editor's example: the first shipped rule (contract/alert-rules.ts). */
export const EXAMPLE_RULE: AlertRule = TLS_SLOW_AND_GPU_OOM_RULE;

export function validateRuleText(text: string, otherIds: string[] = []): RuleValidation {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, problems: [problem([], `Not valid JSON: ${(e as Error).message}`)] };
  }
  const parsed = AlertRule.safeParse(json);
  const problems: RuleProblem[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      let message = issue.message;
      if (issue.path.length === 1 && issue.path[0] === 'id') {
        message = 'The id must be 1–80 letters, digits, "_", "." or "-" (it names the rule in links and Alertmanager).';
      } else if (issue.code === 'invalid_union' || /discriminator/i.test(issue.message)) {
        message =
          'Each condition needs "kind": "metric" (expr, op, threshold) or "kind": "kernel" (type, and consecutive or atLeast).';
      }
      problems.push(problem(issue.path, message));
    }
    return { ok: false, problems };
  }
  const rule = parsed.data;
  rule.conditions.forEach((c: AlertCondition, i) => {
    if (c.kind === 'kernel' && c.consecutive === undefined && c.atLeast === undefined) {
      problems.push(
        problem(
          ['conditions', i],
          `Kernel condition on ${c.type} needs "consecutive" (N in a row on one pod) or "atLeast" (N in the window).`
        )
      );
    }
    if (c.kind === 'kernel' && c.consecutive !== undefined && c.atLeast !== undefined) {
      problems.push(problem(['conditions', i], 'Use either "consecutive" or "atLeast", not both.'));
    }
  });
  if (otherIds.includes(rule.id)) {
    problems.push(problem(['id'], `Another rule already has the id "${rule.id}".`));
  }
  if (rule.withinMs > rule.lookbackMs) {
    problems.push(
      problem(
        ['withinMs'],
        `The co-occurrence window (${rule.withinMs} ms) cannot be longer than the lookback (${rule.lookbackMs} ms).`
      )
    );
  }
  return problems.length ? { ok: false, problems } : { ok: true, rule };
}

/** One line per condition, as a person would say it. */
export function describeCondition(c: AlertCondition): string {
  if (c.kind === 'metric') {
    return `${c.expr} ${c.op} ${c.threshold}`;
  }
  const dur = c.minDurationMs !== undefined ? ` > ${c.minDurationMs} ms` : '';
  const n = c.consecutive !== undefined ? `${c.consecutive} consecutive` : `≥ ${c.atLeast ?? 1}`;
  return `${n} ${c.type}${dur}${c.pod ? ` on ${c.pod}` : ' on one pod'}`;
}

/** A rules file: the export's format (`hopscope-alert-rules/v1`, its `version` ignored) or a bare `{rules}`. */
const RulesFile = z.object({ format: z.literal('hopscope-alert-rules/v1').optional(), rules: z.array(AlertRule) });

export type RulesFileRead = { ok: true; rules: AlertRule[] } | { ok: false; message: string };

/** The rules of a file to import, or why it is not one (the proxy checks them again, with the evaluator). */
export function readRulesFile(text: string): RulesFileRead {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, message: `Not a JSON file: ${(e as Error).message}` };
  }
  const parsed = RulesFile.safeParse(json);
  return parsed.success
    ? { ok: true, rules: parsed.data.rules }
    : { ok: false, message: `Not a rules file: ${formatZodError(parsed.error, { root: 'file' })}` };
}
