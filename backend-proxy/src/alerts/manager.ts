/**
 * Holds the composite rules and the alerts, evaluates continuously, and pushes firing/resolved alerts to
 * Alertmanager's v2 API when one is configured. Rules survive restarts when a rules file is configured (read at
 * start, written atomically on every change); alert state is per proxy instance.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type pino from 'pino';
import { type Alert, type AlertRule, AlertRules, appPaths, formatZodError, type KernelEvent, podOfSpan, type SourceStatus, withQuery } from '../../../contract';
import { ConfigError } from '../config';
import { alertsFiring } from '../metrics';
import { callJson, settle } from '../sources/http';
import { eventsFromAll, type ExporterSource } from '../sources/exporters';
import type { PrometheusSource, PromSeries } from '../sources/prometheus';
import type { TraceStore } from '../store/trace-store';
import { evaluateRule } from './evaluate';

export const DEFAULT_RULES: AlertRule[] = [{
  id: 'tls-slow-and-gpu-oom',
  name: 'Slow TLS handshakes with a GPU allocation failure',
  conditions: [
    { kind: 'kernel', type: 'tls_handshake', minDurationMs: 500, consecutive: 3 },
    { kind: 'kernel', type: 'gpu_alloc_fail', atLeast: 1 },
  ],
  withinMs: 5000, lookbackMs: 60_000, severity: 'critical', enabled: true,
}];

/** Rules from `file`: undefined when it does not exist yet (defaults apply), a ConfigError when it is unusable. */
function readRulesFile(file: string): AlertRule[] | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`HOPSCOPE_ALERT_RULES_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`HOPSCOPE_ALERT_RULES_FILE: ${file} is not JSON (${(err as Error).message})`);
  }
  const parsed = AlertRules.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`HOPSCOPE_ALERT_RULES_FILE: ${file}: ${formatZodError(parsed.error)} (expected {"rules": [...]}, as GET /api/alerts/rules answers)`);
  }
  return parsed.data.rules;
}

/** Writes next to the file and renames over it: a crash mid-write never leaves half a rules file. */
function writeRulesFile(file: string, rules: AlertRule[]): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ rules }, null, 2)}\n`);
  renameSync(tmp, file);
}

/** What the manager reads and where it pushes. */
interface AlertInputs {
  /** The live list (DNS discovery updates it in place). */
  exporters: ExporterSource[];
  prometheus?: PrometheusSource;
  /** Recent spans name the service of an alert's pod, for its drill-down link. */
  store: TraceStore;
  alertmanager?: { url: string; timeoutMs: number };
}

export class AlertManager {
  rules: AlertRule[] = DEFAULT_RULES;
  private active = new Map<string, Alert>();
  private history: Alert[] = [];
  evaluatedAt: number | null = null;
  lastSources: SourceStatus[] = [];
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private inputs: AlertInputs, private log: pino.Logger, private rulesFile?: string) {
    const saved = rulesFile ? readRulesFile(rulesFile) : undefined;
    if (saved) this.rules = saved;
  }

  start(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => { void this.evaluate(); }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Replaces the rules; with a rules file, saved first, so a failed save changes nothing (and throws). */
  setRules(rules: AlertRule[]): void {
    if (this.rulesFile) writeRulesFile(this.rulesFile, rules);
    this.rules = rules;
    // Alerts of removed rules resolve on the next evaluation.
  }

  list(): Alert[] {
    return [...this.active.values(), ...this.history].sort((a, b) => b.startsAt - a.startsAt);
  }

  /** One evaluation round; concurrent callers share it. */
  evaluate(now = Date.now()): Promise<void> {
    this.running ??= this.round(now).finally(() => { this.running = undefined; });
    return this.running;
  }

  private link(pod: string | undefined, at: number, ruleId: string): string {
    const from = at - 5 * 60_000;
    const to = at + 60_000;
    if (pod) {
      const svc = this.inputs.store.spansInWindow(from, to, 20_000).find((s) => podOfSpan(s) === pod)?.service;
      if (svc) return withQuery(appPaths.pod(svc, pod), { from, to });
    }
    return withQuery(appPaths.alerts(), { rule: ruleId, from, to });
  }

  private async round(now: number): Promise<void> {
    const rules = this.rules.filter((r) => r.enabled);
    const lookback = Math.max(0, ...rules.map((r) => r.lookbackMs));
    const statuses: SourceStatus[] = [];
    let events: KernelEvent[] = [];
    if (rules.some((r) => r.conditions.some((c) => c.kind === 'kernel')) && this.inputs.exporters.length) {
      const k = await eventsFromAll(this.inputs.exporters, { from: now - lookback, to: now, limit: 100_000 });
      events = k.events;
      statuses.push(...k.sources);
    }
    const metrics = new Map<string, PromSeries[] | Error>();
    const exprs = [...new Set(rules.flatMap((r) => r.conditions.flatMap((c) => (c.kind === 'metric' ? [c.expr] : []))))];
    if (exprs.length) {
      const prom = this.inputs.prometheus;
      const s = await settle('prometheus', async () => {
        await Promise.all(exprs.map(async (e) => {
          if (!prom) { metrics.set(e, new Error('prometheus: not configured')); return; }
          try { metrics.set(e, await prom.query(e, now)); } catch (err) { metrics.set(e, err as Error); }
        }));
        const firstErr = [...metrics.values()].find((v) => v instanceof Error) as Error | undefined;
        if (firstErr) throw firstErr;
      });
      statuses.push(s.status);
    }
    const changed: Alert[] = [];
    for (const rule of rules) {
      const ruleEvents = events.filter((e) => e.ts >= now - rule.lookbackMs);
      const v = evaluateRule(rule, { events: ruleEvents, metrics });
      if (v.unknown) continue; // cannot tell: keep the current state rather than flap
      const key = rule.id;
      const cur = this.active.get(key);
      if (v.firing && !cur) {
        const a: Alert = { ruleId: rule.id, name: rule.name, state: 'firing', severity: rule.severity, startsAt: v.atMs ?? now, summary: v.summary, link: this.link(v.pod, v.atMs ?? now, rule.id), ...(v.pod ? { pod: v.pod } : {}) };
        this.active.set(key, a);
        changed.push(a);
      } else if (!v.firing && cur) {
        this.resolve(key, cur, now, changed);
      } else if (cur) {
        changed.push(cur); // Alertmanager needs firing alerts re-sent, or it resolves them itself
      }
    }
    // Rules removed or disabled since the last round: their alerts resolve.
    const live = new Set(rules.map((r) => r.id));
    for (const [key, cur] of [...this.active]) if (!live.has(key)) this.resolve(key, cur, now, changed);
    alertsFiring.set(this.active.size);
    this.evaluatedAt = now;
    const am = this.inputs.alertmanager;
    if (am && changed.length) statuses.push((await settle('alertmanager', () => this.push(am, changed))).status);
    this.lastSources = statuses;
  }

  private resolve(key: string, cur: Alert, now: number, changed: Alert[]): void {
    const done: Alert = { ...cur, state: 'resolved', endsAt: now };
    this.active.delete(key);
    this.history.unshift(done);
    this.history.length = Math.min(this.history.length, 200);
    changed.push(done);
  }

  private async push(am: { url: string; timeoutMs: number }, alerts: Alert[]): Promise<void> {
    const body = alerts.map((a) => ({
      labels: { alertname: a.name.replace(/[^A-Za-z0-9_]/g, '_'), rule_id: a.ruleId, severity: a.severity, source: 'hopscope', ...(a.pod ? { pod: a.pod } : {}) },
      annotations: { summary: a.summary, link: a.link },
      startsAt: new Date(a.startsAt).toISOString(),
      ...(a.endsAt ? { endsAt: new Date(a.endsAt).toISOString() } : {}),
      generatorURL: a.link,
    }));
    const r = await callJson(`${am.url}/api/v2/alerts`, {
      source: 'alertmanager', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), timeoutMs: am.timeoutMs,
    });
    if (r.status < 200 || r.status >= 300) throw new Error(`HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    this.log.debug({ n: alerts.length }, 'alerts pushed to alertmanager');
  }
}
