/**
 * What a rule set must be before anything stores it, wherever it comes from (PUT, import, HOPSCOPE_ALERT_RULES_FILE):
 * bounded (a rule count and a size, checked before the rules are parsed one by one), valid by the contract, ids
 * unique, and accepted by the evaluator (`acceptRules`: a dry evaluation of every rule). A refusal says which bound
 * or which rule, and is a 413 (too many, too big) or a 400.
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import { type AlertRule, AlertRule as AlertRuleSchema } from '../../../contract';
import { ALERT_LIMITS } from '../db/alerts-repo';
import { acceptRules } from './evaluate';

/** A HOPSCOPE_ALERT_RULES_FILE larger than this is not read at all (pretty-printed JSON of the largest rule set fits). */
export const RULES_FILE_MAX_BYTES = 8 * ALERT_LIMITS.rulesBytes;

export class RuleSetError extends Error {
  override name = 'RuleSetError';
  constructor(
    public readonly status: 400 | 413,
    public readonly code: 'bad_request' | 'payload_too_large',
    message: string
  ) {
    super(message);
  }
}

const tooLarge = (m: string): RuleSetError => new RuleSetError(413, 'payload_too_large', m);
const invalid = (m: string): RuleSetError => new RuleSetError(400, 'bad_request', m);

/**
 * `raw` is `{rules: [...]}` (as GET answers, or the export format): the rules, parsed and accepted. `what` names the
 * origin in messages ("body", the file).
 */
export function checkRuleSet(raw: unknown, what = 'body'): AlertRule[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(`${what}: expected {"rules": [...]}`);
  const list = (raw as { rules?: unknown }).rules;
  if (!Array.isArray(list)) throw invalid(`${what}.rules: expected an array of rules`);
  // Bounds first: nothing below walks an unbounded list.
  if (list.length > ALERT_LIMITS.rules)
    throw tooLarge(`${what}.rules: ${list.length} rules, at most ${ALERT_LIMITS.rules}; nothing was saved`);
  const bytes = Buffer.byteLength(JSON.stringify(list));
  if (bytes > ALERT_LIMITS.rulesBytes)
    throw tooLarge(`${what}.rules: ${bytes} bytes of rules, at most ${ALERT_LIMITS.rulesBytes}; nothing was saved`);
  const rules: AlertRule[] = [];
  for (let i = 0; i < list.length; i++) {
    const p = AlertRuleSchema.safeParse(list[i]);
    if (!p.success) {
      const issues = p.error.issues
        .slice(0, 3)
        .map((x) => `${x.path.join('.') || '(rule)'}: ${x.message}`)
        .join('; ');
      throw invalid(`${what}.rules[${i}]: ${issues}`);
    }
    rules.push(p.data);
  }
  const ids = new Set<string>();
  for (const r of rules) {
    if (ids.has(r.id)) throw invalid(`${what}.rules: every rule id must be unique ("${r.id}" appears twice)`);
    ids.add(r.id);
  }
  const refused = acceptRules(rules);
  if (refused) throw invalid(`${what}.rules: ${refused}; nothing was saved`);
  return rules;
}

/** Reads a rules file within RULES_FILE_MAX_BYTES: its parsed JSON, or why not (a message naming the file). */
export function readRulesFile(file: string): { json: unknown } | { problem: string } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${(err as Error).message}` };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > RULES_FILE_MAX_BYTES)
      return {
        problem: `${file} is ${size} bytes, over the ${RULES_FILE_MAX_BYTES}-byte limit of a rules file (at most ${ALERT_LIMITS.rules} rules)`,
      };
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (!n) break;
      off += n;
    }
    try {
      return { json: JSON.parse(buf.subarray(0, off).toString('utf8')) };
    } catch (err) {
      return { problem: `${file} is not JSON (${(err as Error).message})` };
    }
  } finally {
    closeSync(fd);
  }
}
