/**
 * Composite alerts on the database. The rules are one versioned set in the database, shared by every proxy on it
 * (seeded with the defaults once, or imported from HOPSCOPE_ALERT_RULES_FILE when the database holds none). Only the
 * proxy holding the `alerts-evaluator` lease evaluates and pushes to Alertmanager; it records each firing/resolved
 * transition in the database before it pushes, and reloads the firing alerts when it takes the lease (a restart, or
 * taking over from a proxy that died). Every proxy answers reads from the database.
 *
 * Alertmanager: firing alerts are re-sent every round with a rolling `endsAt` (now + a few rounds, and at least a
 * lease ttl, so a successor takes over before Alertmanager resolves them), resolved ones with their resolve time;
 * `generatorURL` and the `link` annotation are absolute (HOPSCOPE_APP_URL); labels are alertname, rule_id, pod,
 * severity and source="hopscope" (what deploy/alertmanager/alertmanager.yml groups by).
 */
import client from 'prom-client';
import type pino from 'pino';
import {
  type Alert,
  type AlertRule,
  appLink,
  appPaths,
  DEFAULT_ALERT_RULES,
  type KernelEvent,
  podOfSpan,
  type SourceStatus,
  withQuery,
} from '../../../contract';
import type { Database } from '../db/database';
import * as repo from '../db/alerts-repo';
import { LeaseKeeper, LeaseLostError } from '../db/lease';
import { alertsFiring, registry } from '../metrics';
import { callJson, settle } from '../sources/http';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';
import type { TraceStore } from '../store/trace-store';
import { evaluateRule, ROUND_MAX_EVENTS } from './evaluate';
import { checkRuleSet, readRulesFile, RuleSetError } from './rules';

/** The shipped rules (contract/alert-rules.ts), seeded into a database that holds none. */
export const DEFAULT_RULES: AlertRule[] = [...DEFAULT_ALERT_RULES];

export const EVALUATOR_LEASE = 'alerts-evaluator';
/** Alert history older than this is deleted (by the evaluator, hourly). */
const HISTORY_RETENTION_MS = 90 * 86_400_000;
/** Recent alerts kept in memory for synchronous readers (the postmortem export). */
const RECENT = 1000;

const alertsPushed = new client.Counter({
  name: 'hopscope_proxy_alerts_pushed_total',
  help: 'Composite alerts sent to Alertmanager by this proxy, by state',
  labelNames: ['state'],
  registers: [registry],
});

export interface AlertManagerOptions {
  db: Database;
  log: pino.Logger;
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
  prometheus?: PrometheusSource;
  /** Recent spans name the service of an alert's pod, for its drill-down link. */
  store: TraceStore;
  alertmanager?: { url: string; timeoutMs: number };
  /** HOPSCOPE_APP_URL: links sent outside the app are absolute under it. */
  appUrl: string;
  intervalMs: number;
  leaseTtlMs: number;
  /** This proxy, as lease holder and in `updatedBy`. */
  holder: string;
  rulesFile?: string;
}

const keyOf = (ruleId: string, pod: string | undefined): string => `${ruleId}\u0000${pod ?? ''}`;

export class AlertManager {
  private set: repo.RuleSet | null = null;
  /** Why the rules file was not imported (shown with the rules and in the log). */
  importProblem: string | undefined;
  /** The evaluator's view of the firing alerts (loaded from the database when it takes the lease). */
  private active = new Map<string, Alert>();
  private loadedActive = false;
  /** Resolved alerts whose push failed: sent again next round. */
  private unsentResolved: Alert[] = [];
  private recent: Alert[] = [];
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private ready?: Promise<void>;
  private lastPrune = 0;
  readonly lease: LeaseKeeper;
  /** This proxy's own latest round (the database has the evaluator's). */
  evaluatedAt: number | null = null;
  lastSources: SourceStatus[] = [];

  constructor(private o: AlertManagerOptions) {
    this.lease = new LeaseKeeper({
      db: o.db,
      name: EVALUATOR_LEASE,
      holder: o.holder,
      ttlMs: o.leaseTtlMs,
      log: o.log,
      onChange: (held) => {
        if (!held) this.loadedActive = false;
      },
    });
  }

  /** Loads (seeding or importing once) the rules. Resolves even when the database is down (retried each round). */
  init(): Promise<void> {
    this.ready ??= this.loadRules().catch((err: unknown) => {
      this.o.log.warn(
        { err: (err as Error).message },
        'alerts: cannot load the rules from the database yet; retrying every round'
      );
      this.ready = undefined;
    });
    return this.ready;
  }

  start(): void {
    void this.init();
    if (this.o.intervalMs <= 0) return;
    this.lease.start();
    this.timer = setInterval(() => {
      void this.evaluate();
    }, this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.lease.stop();
  }

  get rules(): AlertRule[] {
    return this.set?.rules ?? [];
  }

  get version(): number {
    return this.set?.version ?? 0;
  }

  get ruleSet(): repo.RuleSet | null {
    return this.set;
  }

  /** The rules as the database has them now (another proxy may have saved since). */
  async currentRules(): Promise<repo.RuleSet | null> {
    await this.init();
    const s = await repo.getRules(this.o.db);
    if (s) this.set = s;
    return this.set;
  }

  /**
   * Saves `raw` ({rules}) as the new rule set: bounded and accepted by the evaluator first (RuleSetError), then
   * written with `expectedVersion` (AlertRulesConflictError when another save came first). Durable when it resolves.
   */
  async saveRules(raw: unknown, o: { expectedVersion?: number; by: string; what?: string }): Promise<repo.RuleSet> {
    const rules = checkRuleSet(raw, o.what);
    await this.init();
    const saved = await repo.putRules(this.o.db, rules, { expectedVersion: o.expectedVersion, by: o.by });
    this.set = saved;
    this.importProblem = undefined;
    return saved;
  }

  /** Firing and recent resolved alerts this proxy last read or evaluated (synchronous readers). */
  recentAlerts(): Alert[] {
    return this.recent;
  }

  /** One round (only the lease holder evaluates; every proxy refreshes its view); concurrent callers share it. */
  evaluate(now = Date.now()): Promise<void> {
    this.running ??= this.round(now)
      .catch((err: unknown) => {
        this.o.log.warn({ err: (err as Error).message }, 'alerts: round failed; next round retries');
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async loadRules(): Promise<void> {
    const db = this.o.db;
    const cur = await repo.getRules(db);
    if (cur) {
      this.set = cur;
      if (this.o.rulesFile)
        this.o.log.info(
          { file: this.o.rulesFile, version: cur.version },
          'alerts: HOPSCOPE_ALERT_RULES_FILE not imported: the database already holds a rule set (import with POST /api/alerts/rules/import)'
        );
      return;
    }
    if (!this.o.rulesFile) {
      this.set = await repo.seedRules(db, DEFAULT_RULES);
      return;
    }
    const file = this.o.rulesFile;
    const read = readRulesFile(file);
    try {
      if ('problem' in read) throw new RuleSetError(400, 'bad_request', read.problem);
      this.set = await repo.putRules(db, checkRuleSet(read.json, file), { expectedVersion: 0, by: `import ${file}` });
      this.o.log.info(
        { file, rules: this.set.rules.length, version: this.set.version },
        'alerts: rules imported from HOPSCOPE_ALERT_RULES_FILE'
      );
    } catch (err) {
      if (err instanceof repo.AlertRulesConflictError) {
        // Another proxy imported or saved first: theirs stands.
        this.set = await repo.getRules(db);
        return;
      }
      if (!(err instanceof RuleSetError)) throw err;
      // Refused, and nothing stored: the proxy runs (without composite rules) and the next start tries again.
      this.importProblem = `HOPSCOPE_ALERT_RULES_FILE not imported: ${err.message}`;
      this.o.log.error(
        { file, problem: err.message },
        'alerts: HOPSCOPE_ALERT_RULES_FILE refused, nothing imported; the proxy runs without composite rules until the file is fixed (and the proxy restarted) or rules are PUT'
      );
      this.set = null;
    }
  }

  private link(pod: string | undefined, at: number, ruleId: string): string {
    const from = at - 5 * 60_000;
    const to = at + 60_000;
    if (pod) {
      const svc = this.o.store.spansInWindow(from, to, 20_000).find((s) => podOfSpan(s) === pod)?.service;
      if (svc) return withQuery(appPaths.pod(svc, pod), { from, to });
    }
    return withQuery(appPaths.alerts(), { rule: ruleId, from, to });
  }

  private async round(now: number): Promise<void> {
    if (!this.set) await this.init();
    // No loop (interval 0): a round on demand takes the lease for it, as the loop would.
    if (!this.timer) await this.lease.tick();
    if (!this.lease.held()) {
      // Not the evaluator: what it recorded is what this proxy shows.
      this.active.clear();
      this.loadedActive = false;
      await this.refreshRecent();
      return;
    }
    const db = this.o.db;
    const s = await repo.getRules(db);
    if (s) this.set = s;
    if (!this.loadedActive) {
      // Taking over (or starting): the firing alerts as the previous evaluator left them.
      this.active.clear();
      for (const st of await repo.alertStates(db, { firingOnly: true }))
        this.active.set(keyOf(st.ruleId, st.pod), st.alert);
      this.loadedActive = true;
    }
    const rules = this.rules.filter((r) => r.enabled);
    let lookback = 0;
    for (const r of rules) if (r.lookbackMs > lookback) lookback = r.lookbackMs;
    const statuses: SourceStatus[] = [];
    let events: KernelEvent[] = [];
    if (rules.some((r) => r.conditions.some((c) => c.kind === 'kernel')) && this.o.exporters.length) {
      const k = await eventsFromAll(this.o.exporters, { from: now - lookback, to: now, limit: ROUND_MAX_EVENTS });
      events = k.events;
      for (const st of k.sources) statuses.push(st);
    }
    const metrics = new Map<string, PromSeries[] | Error>();
    const exprs = new Set<string>();
    for (const r of rules) for (const c of r.conditions) if (c.kind === 'metric') exprs.add(c.expr);
    if (exprs.size) {
      const prom = this.o.prometheus;
      const st = await settle('prometheus', async () => {
        await Promise.all(
          Array.from(exprs, async (e) => {
            if (!prom) {
              metrics.set(e, new Error('prometheus: not configured'));
              return;
            }
            try {
              metrics.set(e, await prom.query(e, now));
            } catch (err) {
              metrics.set(e, err as Error);
            }
          })
        );
        for (const v of metrics.values()) if (v instanceof Error) throw v;
      });
      statuses.push(st.status);
    }
    const firing: Alert[] = [];
    const resolved: Alert[] = [];
    const byRule = new Map<string, Alert[]>();
    for (const a of this.active.values()) {
      const l = byRule.get(a.ruleId);
      if (l) l.push(a);
      else byRule.set(a.ruleId, [a]);
    }
    for (const rule of rules) {
      const ruleEvents = events.filter((e) => e.ts >= now - rule.lookbackMs);
      const v = evaluateRule(rule, { events: ruleEvents, metrics });
      const cur = byRule.get(rule.id) ?? [];
      if (v.unknown) {
        for (const a of cur) firing.push(a); // cannot tell: keep the current state rather than flap
        continue;
      }
      if (v.firing && !cur.length) {
        const a: Alert = {
          ruleId: rule.id,
          name: rule.name,
          state: 'firing',
          severity: rule.severity,
          startsAt: v.atMs ?? now,
          summary: v.summary,
          link: this.link(v.pod, v.atMs ?? now, rule.id),
          ...(v.pod ? { pod: v.pod } : {}),
        };
        if (await this.transition(a, now)) firing.push(a);
      } else if (!v.firing) {
        for (const a of cur) if ((await this.resolve(a, now, resolved)) === false) firing.push(a);
      } else {
        for (const a of cur) firing.push(a); // Alertmanager needs firing alerts re-sent, or it resolves them itself
      }
    }
    // Rules removed or disabled since the last round: their alerts resolve.
    const live = new Set(rules.map((r) => r.id));
    for (const a of Array.from(this.active.values())) if (!live.has(a.ruleId)) await this.resolve(a, now, resolved);
    alertsFiring.set(this.active.size);
    const am = this.o.alertmanager;
    const retry = this.unsentResolved;
    this.unsentResolved = [];
    const toPush = firing.concat(resolved, retry);
    if (am && toPush.length && this.lease.held()) {
      const pushed = await settle('alertmanager', () => this.push(am, toPush, now));
      statuses.push(pushed.status);
      if (!pushed.status.ok) this.unsentResolved = resolved.concat(retry).slice(-RECENT);
    }
    this.evaluatedAt = now;
    this.lastSources = statuses;
    const token = this.lease.token;
    if (token !== null)
      await repo.recordEvaluation(db, { holder: this.o.holder, token, evaluatedMs: now, sources: statuses });
    if (now - this.lastPrune > 3600_000) {
      this.lastPrune = now;
      await repo.pruneAlertHistory(db, now - HISTORY_RETENTION_MS);
      await repo.forgetRules(
        db,
        this.rules.map((r) => r.id)
      );
    }
    await this.refreshRecent();
  }

  /** Records a transition (only while holding the lease); the in-memory state follows only once it is stored. */
  private async transition(a: Alert, now: number): Promise<boolean> {
    const token = this.lease.token;
    if (token === null) return false;
    // Fenced in the database by the lease and its token: had another proxy taken the lease since `held()` (a pause,
    // a partition), the write is refused there, not merely skipped here.
    try {
      await repo.recordAlert(this.o.db, a, now, { lease: EVALUATOR_LEASE, holder: this.o.holder, token });
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      this.o.log.warn({ rule: a.ruleId, pod: a.pod }, `alerts: ${err.message}`);
      return false;
    }
    if (a.state === 'firing') this.active.set(keyOf(a.ruleId, a.pod), a);
    else this.active.delete(keyOf(a.ruleId, a.pod));
    return true;
  }

  private async resolve(cur: Alert, now: number, out: Alert[]): Promise<boolean> {
    const done: Alert = { ...cur, state: 'resolved', endsAt: now };
    if (!(await this.transition(done, now))) return false;
    out.push(done);
    return true;
  }

  /** The firing alerts and the latest resolved ones, from the database. */
  private async refreshRecent(): Promise<void> {
    const db = this.o.db;
    const [states, hist] = await Promise.all([
      repo.alertStates(db, { firingOnly: true }),
      repo.alertHistory(db, { limit: RECENT }),
    ]);
    const out: Alert[] = states.map((s) => s.alert);
    for (const h of hist) if (h.alert.state === 'resolved') out.push(h.alert);
    this.recent = out.sort((a, b) => b.startsAt - a.startsAt);
  }

  /** How long a firing alert stays firing in Alertmanager without being re-sent. */
  private endsAfterMs(): number {
    return Math.max(4 * this.o.intervalMs, this.o.leaseTtlMs + 2 * this.o.intervalMs);
  }

  private async push(am: { url: string; timeoutMs: number }, alerts: Alert[], now: number): Promise<void> {
    const endsAt = new Date(now + this.endsAfterMs()).toISOString();
    const body = alerts.map((a) => {
      const link = appLink(this.o.appUrl, a.link);
      return {
        labels: {
          alertname: a.name.replace(/[^A-Za-z0-9_]/g, '_'),
          rule_id: a.ruleId,
          severity: a.severity,
          source: 'hopscope',
          ...(a.pod ? { pod: a.pod } : {}),
        },
        annotations: { summary: a.summary, link },
        startsAt: new Date(a.startsAt).toISOString(),
        endsAt: a.state === 'resolved' && a.endsAt !== undefined ? new Date(a.endsAt).toISOString() : endsAt,
        generatorURL: link,
      };
    });
    const r = await callJson(`${am.url}/api/v2/alerts`, {
      source: 'alertmanager',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: am.timeoutMs,
    });
    if (r.status < 200 || r.status >= 300) throw new Error(`HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    let f = 0;
    for (const a of alerts) if (a.state === 'firing') f++;
    alertsPushed.inc({ state: 'firing' }, f);
    alertsPushed.inc({ state: 'resolved' }, alerts.length - f);
    this.o.log.debug({ n: alerts.length }, 'alerts pushed to alertmanager');
  }
}
