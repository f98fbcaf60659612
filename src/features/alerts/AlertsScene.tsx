/**
 * Alerts: the composite rules (list, enable/disable, create and edit with a validation message for each mistake) and
 * the firing/resolved alerts, each linking to the drill-down at the right time.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import type { SceneComponentProps } from '@grafana/scenes';
import { Alert as AlertBox, Button, Switch, TextArea, useStyles2 } from '@grafana/ui';
import React, { useState } from 'react';

import type { AlertRule, AlertRules, AlertsAnswer } from '../../../contract';
import { api } from '../../api/client';
import { testIds } from '../../testIds';
import { describeCondition, EXAMPLE_RULE, validateRuleText, type RuleProblem } from '../../transforms/alertRules';
import { AppLink } from '../shared/AppLink';
import { DataTable } from '../shared/DataTable';
import { fmtTime } from '../shared/format';
import { Panel } from '../shared/Panel';
import { ViewObject, type QueryContext, type ViewState } from '../shared/viewObject';

interface AlertsState extends ViewState {
  /** The rule being edited (JSON text) and whether it is new. */
  editing?: { text: string; originalId?: string };
  problems?: RuleProblem[];
  saveError?: string;
  saving?: boolean;
}

export class AlertsScene extends ViewObject<AlertsState> {
  static Component = AlertsRenderer;

  constructor() {
    super({ sections: {} });
  }

  protected load(ctx: QueryContext): void {
    this.section('rules', api.alertRules());
    this.section('alerts', api.alerts({ from: ctx.from, to: ctx.to }));
  }

  private rules(): AlertRule[] {
    const s = this.get<AlertRules>('rules');
    return s.status === 'ok' ? s.data.rules : [];
  }

  public edit(rule?: AlertRule): void {
    this.setState({ editing: { text: JSON.stringify(rule ?? { ...EXAMPLE_RULE, id: `rule-${this.rules().length + 1}` }, null, 2), originalId: rule?.id }, problems: undefined, saveError: undefined });
  }

  public cancel(): void {
    this.setState({ editing: undefined, problems: undefined, saveError: undefined });
  }

  public setText(text: string): void {
    if (this.state.editing) {
      this.setState({ editing: { ...this.state.editing, text } });
    }
  }

  public async save(): Promise<void> {
    const editing = this.state.editing;
    if (!editing) {
      return;
    }
    const others = this.rules().filter((r) => r.id !== editing.originalId);
    const v = validateRuleText(editing.text, others.map((r) => r.id));
    if (!v.ok) {
      this.setState({ problems: v.problems });
      return;
    }
    const idx = this.rules().findIndex((r) => r.id === editing.originalId);
    const next = [...this.rules()];
    if (idx >= 0) {
      next[idx] = v.rule;
    } else {
      next.push(v.rule);
    }
    await this.put(next, true);
  }

  public async toggle(rule: AlertRule, enabled: boolean): Promise<void> {
    await this.put(this.rules().map((r) => (r.id === rule.id ? { ...r, enabled } : r)), false);
  }

  private async put(rules: AlertRule[], closeEditor: boolean): Promise<void> {
    this.setState({ saving: true, saveError: undefined });
    const res = await api.putAlertRules({ rules });
    if (!res.ok) {
      this.setState({ saving: false, saveError: `${res.error.code}: ${res.error.message}` });
      return;
    }
    this.setSections({ rules: { status: 'ok', data: res.data } });
    this.setState({ saving: false, ...(closeEditor ? { editing: undefined, problems: undefined } : {}) });
  }
}

function AlertsRenderer({ model }: SceneComponentProps<AlertsScene>) {
  const { editing, problems, saveError, saving } = model.useState();
  const styles = useStyles2(getStyles);
  const rules = model.get<AlertRules>('rules');
  const alerts = model.get<AlertsAnswer>('alerts');
  return (
    <div className={styles.page} data-testid={testIds.page.container('alerts')}>
      {saveError && !editing && (
        <AlertBox severity="error" title="Could not save the rules">
          {saveError}
        </AlertBox>
      )}
      <Panel
        id="alert-rules"
        title="Composite rules"
        section={rules}
        height={rules.status === 'ok' ? Math.min(320, 60 + rules.data.rules.length * 34) : 160}
        isEmpty={(d) => d.rules.length === 0}
        emptyText="No rule yet: create one (the example joins slow TLS handshakes and a GPU allocation failure)."
        actions={
          <Button size="sm" icon="plus" onClick={() => model.edit()} data-testid={testIds.alerts.newRule}>
            New rule
          </Button>
        }
      >
        {(d, _w, h) => (
          <DataTable
            testId={testIds.alerts.rules}
            maxHeight={h}
            rows={d.rules}
            rowKey={(r) => r.id}
            columns={[
              {
                id: 'enabled',
                header: 'On',
                cell: (r) => <Switch value={r.enabled} disabled={saving} onChange={(e) => model.toggle(r, e.currentTarget.checked)} aria-label={`Enable ${r.name}`} data-testid={testIds.alerts.ruleToggle(r.id)} />,
              },
              { id: 'name', header: 'Rule', cell: (r) => r.name, sortValue: (r) => r.name },
              { id: 'when', header: 'When all of', cell: (r) => r.conditions.map(describeCondition).join(' AND ') + ` within ${r.withinMs / 1000} s` },
              { id: 'severity', header: 'Severity', cell: (r) => r.severity, sortValue: (r) => r.severity },
              {
                id: 'edit',
                header: '',
                cell: (r) => (
                  <Button size="sm" variant="secondary" fill="text" icon="pen" onClick={() => model.edit(r)} data-testid={testIds.alerts.ruleEdit(r.id)}>
                    Edit
                  </Button>
                ),
              },
            ]}
          />
        )}
      </Panel>
      {editing && (
        <div className={styles.editor} data-testid={testIds.alerts.editor}>
          <h4>{editing.originalId ? `Edit rule ${editing.originalId}` : 'New rule'}</h4>
          <p className={styles.help}>
            JSON: <code>id</code>, <code>name</code>, <code>conditions</code> (metric: expr/op/threshold; kernel: type, minDurationMs, consecutive or atLeast), <code>withinMs</code>,{' '}
            <code>lookbackMs</code>, <code>severity</code>, <code>enabled</code>.
          </p>
          <TextArea rows={14} value={editing.text} onChange={(e) => model.setText(e.currentTarget.value)} className={styles.code} aria-label="Rule JSON" />
          {(problems?.length || saveError) && (
            <div data-testid={testIds.alerts.editorError} role="alert">
              <AlertBox severity="error" title="The rule cannot be saved yet">
                <ul>
                  {problems?.map((p, i) => (
                    <li key={i}>
                      <code>{p.path}</code>: {p.message}
                    </li>
                  ))}
                  {saveError && <li>{saveError}</li>}
                </ul>
              </AlertBox>
            </div>
          )}
          <div className={styles.buttons}>
            <Button onClick={() => model.save()} disabled={saving} data-testid={testIds.alerts.save}>
              Save
            </Button>
            <Button variant="secondary" onClick={() => model.cancel()}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      <Panel id="alerts" title="Alerts (firing and resolved)" section={alerts} height={260} isEmpty={(d) => d.alerts.length === 0} emptyText="No alert fired in this time range.">
        {(d, _w, h) => (
          <DataTable
            testId={testIds.alerts.list}
            maxHeight={h}
            rows={d.alerts}
            rowKey={(a) => `${a.ruleId}-${a.startsAt}-${a.pod ?? ''}`}
            initialSort={{ id: 'start', desc: true }}
            columns={[
              { id: 'state', header: 'State', cell: (a) => (a.state === 'firing' ? '🔥 firing' : '✓ resolved'), sortValue: (a) => a.state },
              { id: 'name', header: 'Rule', cell: (a) => a.name, sortValue: (a) => a.name },
              { id: 'severity', header: 'Severity', cell: (a) => a.severity, sortValue: (a) => a.severity },
              { id: 'start', header: 'Started', cell: (a) => fmtTime(a.startsAt), sortValue: (a) => a.startsAt },
              { id: 'end', header: 'Resolved', cell: (a) => (a.endsAt ? fmtTime(a.endsAt) : '—'), sortValue: (a) => a.endsAt },
              { id: 'summary', header: 'Summary', cell: (a) => a.summary },
              {
                id: 'link',
                header: '',
                cell: (a) => (
                  <AppLink href={a.link} testId={testIds.alerts.alertLink(`${a.ruleId}-${a.startsAt}`)}>
                    Drill down{a.pod ? ` to ${a.pod}` : ''}
                  </AppLink>
                ),
              },
            ]}
          />
        )}
      </Panel>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  editor: css({ padding: theme.spacing(2), border: `1px solid ${theme.colors.border.medium}`, borderRadius: theme.shape.radius.default, background: theme.colors.background.secondary }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  code: css({ fontFamily: theme.typography.fontFamilyMonospace }),
  buttons: css({ display: 'flex', gap: theme.spacing(1), marginTop: theme.spacing(1) }),
});
