/**
 * Composite alerts: builds the AlertManager (rules in the database, evaluation on the proxy holding the evaluator
 * lease, Alertmanager pushes) from the config and the sources, and answers what the routes and the export ask of it,
 * from the database. The database's refusals become HTTP errors here: a concurrent edit is a 409, a rule set over the
 * bounds a 413, an invalid one a 400, the database down a 503 (`database_unavailable`, Retry-After).
 */
import type pino from 'pino';
import type { Alert, AlertRule, AlertRulesExport, AlertsAnswer, AlertTransition } from '../../../contract';
import { AlertManager, EVALUATOR_LEASE } from '../alerts/manager';
import { RuleSetError } from '../alerts/rules';
import type { ProxyConfig } from '../config';
import * as repo from '../db/alerts-repo';
import type { Database } from '../db/database';
import { classify, DatabaseUnavailableError } from '../db/errors';
import { currentLease } from '../db/lease';
import { databaseUnavailable, DomainError, invalid } from '../domain/errors';
import type { TimeRange } from '../domain/time-range';
import type { Sources } from '../sources';

/** The evaluator lease as /api/health shows it. */
export interface AlertsHealth {
  lease: string;
  holder: string | null;
  self: boolean;
  token: number | null;
  expiresAtMs: number | null;
  evaluatedAt: number | null;
  rulesVersion: number;
  importProblem?: string;
  error?: string;
}

export interface RulesAnswer {
  rules: AlertRule[];
  version: number;
  updatedMs: number | null;
  updatedBy: string | null;
  /** Why HOPSCOPE_ALERT_RULES_FILE was not imported at start. */
  notice?: string;
}

/** Raised for a database that cannot answer now: the routes answer 503 with Retry-After. */
function unavailable(err: unknown, what: string): never {
  const e = classify(err, what);
  if (e instanceof DatabaseUnavailableError)
    throw databaseUnavailable(`${e.message}; retry in ${e.retryAfterS} s`, e.retryAfterS);
  throw e;
}

export class AlertService {
  private manager: AlertManager;

  constructor(
    private config: Pick<
      ProxyConfig,
      'alertRulesFile' | 'alertIntervalMs' | 'alertmanagerUrl' | 'sourceTimeoutMs' | 'appUrl' | 'leaseTtlMs'
    >,
    sources: Pick<Sources, 'exporters' | 'prometheus' | 'store'>,
    private db: Database,
    log: pino.Logger,
    private holder: string
  ) {
    const alertmanager = config.alertmanagerUrl
      ? { url: config.alertmanagerUrl, timeoutMs: config.sourceTimeoutMs }
      : undefined;
    this.manager = new AlertManager({
      db,
      log,
      exporters: sources.exporters,
      prometheus: sources.prometheus,
      store: sources.store,
      alertmanager,
      appUrl: config.appUrl,
      intervalMs: config.alertIntervalMs,
      leaseTtlMs: config.leaseTtlMs,
      holder,
      rulesFile: config.alertRulesFile,
    });
  }

  start(): void {
    this.manager.start();
  }

  stop(): Promise<void> {
    return this.manager.stop();
  }

  /** The rule set as the database has it. */
  async rules(): Promise<RulesAnswer> {
    let s: repo.RuleSet | null;
    try {
      s = await this.manager.currentRules();
    } catch (err) {
      unavailable(err, 'the database (alert rules)');
    }
    const notice = this.manager.importProblem;
    return {
      rules: s?.rules ?? [],
      version: s?.version ?? 0,
      updatedMs: s?.updatedMs ?? null,
      updatedBy: s?.updatedBy ?? null,
      ...(notice ? { notice } : {}),
    };
  }

  /**
   * Replaces the rules (PUT, import): bounded and accepted by the evaluator before anything is saved; with
   * `expectedVersion`, only if nobody saved since that version (409). Saved (durably) when it answers.
   */
  async replaceRules(body: unknown, o: { what?: string } = {}): Promise<RulesAnswer> {
    const ev = (body as { expectedVersion?: unknown } | null)?.expectedVersion;
    if (ev !== undefined && (typeof ev !== 'number' || !Number.isInteger(ev) || ev < 0))
      throw invalid(
        'expectedVersion: the version the rules were read at (a whole number, as GET /api/alerts/rules answers)'
      );
    try {
      const s = await this.manager.saveRules(body, {
        expectedVersion: ev as number | undefined,
        by: `${o.what ?? 'PUT'} via ${this.holder}`,
        what: 'body',
      });
      return { rules: s.rules, version: s.version, updatedMs: s.updatedMs, updatedBy: s.updatedBy };
    } catch (err) {
      if (err instanceof RuleSetError)
        throw new DomainError(err.status === 413 ? 'too_large' : 'invalid', err.message, { code: err.code });
      if (err instanceof repo.AlertRulesConflictError)
        throw new DomainError('conflict', err.message, {
          details: { expectedVersion: err.expected, currentVersion: err.current },
        });
      if (err instanceof repo.AlertInputError) throw invalid(err.message);
      unavailable(err, 'the database (alert rules)');
    }
  }

  async exportRules(): Promise<AlertRulesExport> {
    const r = await this.rules();
    return {
      format: 'hopscope-alert-rules/v1',
      version: r.version,
      exportedAt: new Date().toISOString(),
      rules: r.rules,
    };
  }

  /**
   * Firing alerts and the resolved ones overlapping `range` (else of the last day), and the transitions of the range,
   * from the database. `evaluateNow` runs a round first when this proxy is the evaluator (tests, a refresh).
   */
  async answer(range: TimeRange | undefined, evaluateNow: boolean): Promise<AlertsAnswer> {
    const m = this.manager;
    if (evaluateNow) await m.evaluate();
    const now = Date.now();
    const from = range?.from ?? now - 86_400_000;
    const to = range?.to ?? now;
    try {
      const [states, hist, evaluation, lease] = await Promise.all([
        repo.alertStates(this.db, { firingOnly: true }),
        repo.alertHistory(this.db, { from, limit: repo.ALERT_LIMITS.historyPage }),
        repo.lastEvaluation(this.db),
        currentLease(this.db, EVALUATOR_LEASE),
      ]);
      const alerts = activeIn(states, hist, to);
      const history: AlertTransition[] = [];
      for (const h of hist) if (h.atMs <= to) history.push({ id: h.id, atMs: h.atMs, alert: h.alert });
      return {
        alerts,
        history,
        evaluatedAt: evaluation?.evaluatedMs ?? null,
        sources: evaluation?.sources ?? [],
        evaluator: { holder: lease?.holder ?? null, self: lease?.holder === this.holder },
        rulesVersion: m.version,
      };
    } catch (err) {
      unavailable(err, 'the database (alerts)');
    }
  }

  /**
   * Alerts active at some time of the range, from the database as `answer` reads them (so every replica's postmortem
   * agrees); with the database down, this proxy's latest view of it (firing, and the last 1,000 resolved).
   */
  async inRange(range: TimeRange): Promise<Alert[]> {
    try {
      const [states, hist] = await Promise.all([
        repo.alertStates(this.db, { firingOnly: true }),
        repo.alertHistory(this.db, { from: range.from, limit: repo.ALERT_LIMITS.historyPage }),
      ]);
      return activeIn(states, hist, range.to);
    } catch {
      return this.manager.recentAlerts().filter((a) => a.startsAt <= range.to && (a.endsAt ?? Infinity) >= range.from);
    }
  }

  /** The evaluator lease for /api/health. */
  async health(): Promise<AlertsHealth> {
    const base = {
      lease: EVALUATOR_LEASE,
      self: this.manager.lease.held(),
      token: this.manager.lease.token,
      evaluatedAt: this.manager.evaluatedAt,
      rulesVersion: this.manager.version,
      ...(this.manager.importProblem ? { importProblem: this.manager.importProblem } : {}),
    };
    try {
      const l = await currentLease(this.db, EVALUATOR_LEASE);
      return { ...base, holder: l?.holder ?? null, expiresAtMs: l?.expiresAtMs ?? null };
    } catch (err) {
      return { ...base, holder: null, expiresAtMs: null, error: (err as Error).message };
    }
  }
}

/**
 * The alerts active at some time up to `to`, given the firing states and the transitions recorded since the range's
 * start: firing ones that started by `to`, and resolved episodes that started by `to` (a resolved episode is recorded
 * at its end, so one in `hist` ended after the range's start). Newest first.
 */
function activeIn(states: Array<{ alert: Alert }>, hist: Array<{ alert: Alert }>, to: number): Alert[] {
  const alerts = states.map((s) => s.alert).filter((a) => a.startsAt <= to);
  for (const h of hist) if (h.alert.state === 'resolved' && h.alert.startsAt <= to) alerts.push(h.alert);
  return alerts.sort((a, b) => b.startsAt - a.startsAt);
}
