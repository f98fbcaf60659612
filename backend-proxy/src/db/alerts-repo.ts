/**
 * Alert rules, state and history. The rules are one versioned set shared by every proxy on the database (a PUT
 * that names the version it edited fails if another proxy saved since); `HOPSCOPE_ALERT_RULES_FILE` is only an
 * import/export format around it. State is the current firing/resolved alert per (rule, pod); every transition is
 * appended to the history in the same transaction, and recording a state that is already current writes nothing
 * (an evaluator that took over the lease re-evaluating the same alert does not duplicate it).
 */
import {
  Alert,
  AlertRule,
  type Alert as AlertT,
  type AlertRule as AlertRuleT,
  type SourceStatus as SourceStatusT,
} from '../../../contract';
import type { Database, Queryable } from './types';
import { assertFence, type LeaseFence } from './lease';

export const ALERT_LIMITS = { rules: 500, rulesBytes: 1024 * 1024, historyPage: 1000, alertBytes: 16 * 1024 } as const;

export class AlertRulesConflictError extends Error {
  override name = 'AlertRulesConflictError';
  readonly code = 'conflict';
  constructor(
    public readonly expected: number,
    public readonly current: number
  ) {
    super(
      `the alert rules changed meanwhile (you edited version ${expected}, the database has version ${current}): reload them and apply your change again`
    );
  }
}

export class AlertInputError extends Error {
  override name = 'AlertInputError';
  readonly code = 'invalid';
}

export interface RuleSet {
  version: number;
  rules: AlertRuleT[];
  updatedMs: number;
  updatedBy: string | null;
}

export interface AlertStateRow {
  ruleId: string;
  pod: string | undefined;
  state: 'firing' | 'resolved';
  alert: AlertT;
  sinceMs: number;
}

export interface AlertHistoryEntry {
  id: number;
  atMs: number;
  alert: AlertT;
}

function checkRules(rules: AlertRuleT[]): AlertRuleT[] {
  if (rules.length > ALERT_LIMITS.rules)
    throw new AlertInputError(`${rules.length} alert rules: at most ${ALERT_LIMITS.rules}`);
  const parsed = rules.map((r, i) => {
    const p = AlertRule.safeParse(r);
    if (!p.success)
      throw new AlertInputError(
        `rule #${i}: ${p.error.issues
          .slice(0, 3)
          .map((x) => `${x.path.join('.') || '(rule)'}: ${x.message}`)
          .join('; ')}`
      );
    return p.data;
  });
  const ids = new Set<string>();
  for (const r of parsed) {
    if (ids.has(r.id)) throw new AlertInputError(`rule id "${r.id}" appears twice: ids must be unique`);
    ids.add(r.id);
  }
  const bytes = Buffer.byteLength(JSON.stringify(parsed));
  if (bytes > ALERT_LIMITS.rulesBytes)
    throw new AlertInputError(`the rules are ${bytes} bytes, over the ${ALERT_LIMITS.rulesBytes}-byte limit`);
  return parsed;
}

type RuleRow = { version: number; rules: AlertRuleT[]; updated_ms: number; updated_by: string | null };
const ruleSet = (r: RuleRow): RuleSet => ({
  version: r.version,
  rules: r.rules,
  updatedMs: r.updated_ms,
  updatedBy: r.updated_by,
});

/** The current rule set, or null before anything was saved (the caller then seeds its defaults). */
export async function getRules(q: Queryable): Promise<RuleSet | null> {
  const r = await q.query<RuleRow>('SELECT version, rules, updated_ms, updated_by FROM alert_rules WHERE id = 1');
  return r.rows[0] ? ruleSet(r.rows[0]) : null;
}

/** Saves `defaults` as version 1 unless a rule set exists (two proxies seeding at once end with one). */
export async function seedRules(q: Queryable, defaults: AlertRuleT[], nowMs = Date.now()): Promise<RuleSet> {
  const rules = checkRules(defaults);
  await q.query(
    `INSERT INTO alert_rules (id, version, rules, updated_ms, updated_by) VALUES (1, 1, $1::jsonb, $2, 'defaults') ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(rules), nowMs]
  );
  return (await getRules(q))!;
}

/**
 * Replaces the rule set and returns it with its new version. With `expectedVersion`, only if that is still the
 * current version (else AlertRulesConflictError); without, last writer wins.
 */
export async function putRules(
  db: Database,
  rules: AlertRuleT[],
  o: { expectedVersion?: number; by?: string; nowMs?: number } = {}
): Promise<RuleSet> {
  const parsed = checkRules(rules);
  return db.tx(async (q) => {
    const cur =
      (await q.query<{ version: number }>('SELECT version FROM alert_rules WHERE id = 1 FOR UPDATE')).rows[0]
        ?.version ?? 0;
    if (o.expectedVersion !== undefined && o.expectedVersion !== cur)
      throw new AlertRulesConflictError(o.expectedVersion, cur);
    const r = await q.query<RuleRow>(
      `INSERT INTO alert_rules (id, version, rules, updated_ms, updated_by) VALUES (1, $1, $2::jsonb, $3, $4)
       ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, rules = EXCLUDED.rules, updated_ms = EXCLUDED.updated_ms, updated_by = EXCLUDED.updated_by
       RETURNING version, rules, updated_ms, updated_by`,
      [cur + 1, JSON.stringify(parsed), o.nowMs ?? Date.now(), o.by ?? null]
    );
    return ruleSet(r.rows[0]);
  });
}

type StateRow = { rule_id: string; pod: string; state: 'firing' | 'resolved'; alert: AlertT; since_ms: number };
const stateOf = (r: StateRow): AlertStateRow => ({
  ruleId: r.rule_id,
  pod: r.pod || undefined,
  state: r.state,
  alert: r.alert,
  sinceMs: r.since_ms,
});

function checkAlert(alert: AlertT): AlertT {
  const p = Alert.safeParse(alert);
  if (!p.success)
    throw new AlertInputError(
      `alert: ${p.error.issues
        .slice(0, 3)
        .map((x) => `${x.path.join('.') || '(alert)'}: ${x.message}`)
        .join('; ')}`
    );
  if (Buffer.byteLength(JSON.stringify(p.data)) > ALERT_LIMITS.alertBytes)
    throw new AlertInputError(`alert of rule ${alert.ruleId} is over ${ALERT_LIMITS.alertBytes} bytes`);
  return p.data;
}

/**
 * Records `alert` as the current state of (rule, pod). When that changes the state (a new firing, or firing →
 * resolved), also appends it to the history; returns whether it was a transition. Repeating the current state only
 * refreshes the stored alert (its summary may have changed). `fence`: written only while that lease is held with
 * that token, checked in the same transaction (else LeaseLostError and nothing written): an evaluator that lost its
 * lease cannot write one more transition.
 */
export async function recordAlert(
  db: Database,
  alert: AlertT,
  nowMs = Date.now(),
  fence?: LeaseFence
): Promise<boolean> {
  const a = checkAlert(alert);
  const pod = a.pod ?? '';
  const at = a.state === 'resolved' ? (a.endsAt ?? nowMs) : a.startsAt;
  return db.tx(async (q) => {
    if (fence) await assertFence(q, fence);
    // A (rule, pod) never seen counts as resolved. Inserting that first makes a concurrent recorder of the same
    // (rule, pod) wait on the row instead of also seeing "nothing" and appending the same transition twice.
    await q.query(
      `INSERT INTO alert_state (rule_id, pod, state, alert, since_ms, updated_ms) VALUES ($1, $2, 'resolved', $3::jsonb, $4, $5) ON CONFLICT (rule_id, pod) DO NOTHING`,
      [a.ruleId, pod, JSON.stringify(a), at, nowMs]
    );
    const cur = (
      await q.query<{ state: string }>('SELECT state FROM alert_state WHERE rule_id = $1 AND pod = $2 FOR UPDATE', [
        a.ruleId,
        pod,
      ])
    ).rows[0];
    const transition = cur.state !== a.state;
    await q.query(
      `INSERT INTO alert_state (rule_id, pod, state, alert, since_ms, updated_ms) VALUES ($1, $2, $3, $4::jsonb, $5, $6)
       ON CONFLICT (rule_id, pod) DO UPDATE SET state = EXCLUDED.state, alert = EXCLUDED.alert, updated_ms = EXCLUDED.updated_ms,
         since_ms = CASE WHEN alert_state.state = EXCLUDED.state THEN alert_state.since_ms ELSE EXCLUDED.since_ms END`,
      [a.ruleId, pod, a.state, JSON.stringify(a), at, nowMs]
    );
    if (transition) {
      await q.query(
        'INSERT INTO alert_history (rule_id, pod, state, at_ms, alert) VALUES ($1, $2, $3, $4, $5::jsonb)',
        [a.ruleId, pod, a.state, at, JSON.stringify(a)]
      );
    }
    return transition;
  });
}

/** Current state of every (rule, pod) ever seen; `firingOnly` for the active alerts. */
export async function alertStates(q: Queryable, o: { firingOnly?: boolean } = {}): Promise<AlertStateRow[]> {
  const r = await q.query<StateRow>(
    `SELECT rule_id, pod, state, alert, since_ms FROM alert_state ${o.firingOnly ? "WHERE state = 'firing'" : ''} ORDER BY since_ms DESC, rule_id, pod`
  );
  return r.rows.map(stateOf);
}

/** Drops the state of rules that no longer exist (their alerts were resolved first by the evaluator). */
export async function forgetRules(q: Queryable, keepRuleIds: string[]): Promise<number> {
  const r = await q.query(
    `DELETE FROM alert_state WHERE state = 'resolved' AND NOT (rule_id = ANY($1::text[])) RETURNING rule_id`,
    [keepRuleIds]
  );
  return r.rowCount;
}

/** Transitions in [from, to], newest first. */
export async function alertHistory(
  q: Queryable,
  o: { from?: number; to?: number; ruleId?: string; limit?: number } = {}
): Promise<AlertHistoryEntry[]> {
  const limit = Math.min(Math.max(1, o.limit ?? 200), ALERT_LIMITS.historyPage);
  const params: unknown[] = [o.from ?? 0, o.to ?? Number.MAX_SAFE_INTEGER];
  let where = 'at_ms >= $1 AND at_ms <= $2';
  if (o.ruleId !== undefined) {
    params.push(o.ruleId);
    where += ` AND rule_id = $${params.length}`;
  }
  params.push(limit);
  const r = await q.query<{ id: number; at_ms: number; alert: AlertT }>(
    `SELECT id, at_ms, alert FROM alert_history WHERE ${where} ORDER BY at_ms DESC, id DESC LIMIT $${params.length}`,
    params
  );
  return r.rows.map((x) => ({ id: x.id, atMs: x.at_ms, alert: x.alert }));
}

/** Retention: deletes history older than `beforeMs`; returns how many rows went. */
export async function pruneAlertHistory(q: Queryable, beforeMs: number): Promise<number> {
  return (await q.query('DELETE FROM alert_history WHERE at_ms < $1', [beforeMs])).rowCount;
}

export interface AlertEvaluation {
  holder: string;
  /** The evaluator lease's fencing token of the round. */
  token: number;
  evaluatedMs: number;
  sources: SourceStatusT[];
}

type EvaluationRow = { holder: string; token: number; evaluated_ms: number; sources: SourceStatusT[] };

/**
 * The evaluator's latest round. A round of an older lease token never overwrites a newer one (a proxy that lost the
 * lease while its round ran).
 */
export async function recordEvaluation(q: Queryable, e: AlertEvaluation): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO alert_evaluations AS a (id, holder, token, evaluated_ms, sources) VALUES (1, $1, $2, $3, $4::jsonb)
     ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, evaluated_ms = EXCLUDED.evaluated_ms, sources = EXCLUDED.sources
     WHERE a.token <= EXCLUDED.token RETURNING id`,
    [e.holder, e.token, e.evaluatedMs, JSON.stringify(e.sources.slice(0, 100))]
  );
  return r.rowCount > 0;
}

export async function lastEvaluation(q: Queryable): Promise<AlertEvaluation | null> {
  const r = (
    await q.query<EvaluationRow>('SELECT holder, token, evaluated_ms, sources FROM alert_evaluations WHERE id = 1')
  ).rows[0];
  return r ? { holder: r.holder, token: r.token, evaluatedMs: r.evaluated_ms, sources: r.sources } : null;
}
