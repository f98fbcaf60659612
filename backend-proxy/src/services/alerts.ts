/**
 * Composite alerts: builds the AlertManager (rules, continuous evaluation, Alertmanager pushes) from the config and
 * the sources, and answers what the routes and the export ask of it.
 */
import type pino from 'pino';
import type { Alert, AlertRule, AlertsAnswer } from '../../../contract';
import { AlertManager } from '../alerts/manager';
import type { ProxyConfig } from '../config';
import { HttpError } from '../http/errors';
import type { TimeRange } from '../http/params';
import type { Sources } from '../sources';

export class AlertService {
  private manager: AlertManager;

  constructor(
    private config: Pick<ProxyConfig, 'alertRulesFile' | 'alertIntervalMs' | 'alertmanagerUrl' | 'sourceTimeoutMs'>,
    sources: Pick<Sources, 'exporters' | 'prometheus' | 'store'>,
    log: pino.Logger,
  ) {
    const alertmanager = config.alertmanagerUrl ? { url: config.alertmanagerUrl, timeoutMs: config.sourceTimeoutMs } : undefined;
    this.manager = new AlertManager({ exporters: sources.exporters, prometheus: sources.prometheus, store: sources.store, alertmanager }, log, config.alertRulesFile);
  }

  start(): void {
    this.manager.start(this.config.alertIntervalMs);
  }

  stop(): Promise<void> {
    return this.manager.stop();
  }

  get rules(): AlertRule[] {
    return this.manager.rules;
  }

  /** Replaces the rules; a failed save (rules file) keeps the previous ones and says so. */
  replaceRules(rules: AlertRule[]): AlertRule[] {
    try {
      this.manager.setRules(rules);
    } catch (err) {
      throw new HttpError(500, 'not_saved', `rules not saved (${(err as Error).message}); the previous rules stay in effect`);
    }
    return this.manager.rules;
  }

  /**
   * Firing and recently resolved alerts, those overlapping `range` when given. `evaluateNow` runs a round first (tests,
   * and a user pressing refresh); otherwise the loop's latest state (a first round if none ran yet).
   */
  async answer(range: TimeRange | undefined, evaluateNow: boolean): Promise<AlertsAnswer> {
    const m = this.manager;
    if (evaluateNow || m.evaluatedAt === null) await m.evaluate();
    return { alerts: range ? this.inRange(range) : m.list(), evaluatedAt: m.evaluatedAt, sources: m.lastSources };
  }

  /** Alerts active at some time of the range. */
  inRange(range: TimeRange): Alert[] {
    return this.manager.list().filter((a) => a.startsAt <= range.to && (a.endsAt ?? Infinity) >= range.from);
  }
}
