/**
 * Alerts: the composite rules (an editor: list, enable/disable, create and edit with one message per mistake) and
 * the firing/resolved alerts as a table panel on the data source, each alert linking to the drill-down the proxy
 * anchored it to. An alert link without a pod opens this page on its rule (`?rule=<id>`): only that rule's alerts.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Alert as AlertBox, Button, InteractiveTable, Switch, TextArea, useStyles2, type Column } from '@grafana/ui';
import React, { useMemo } from 'react';

import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import type { AlertRule } from '../../../contract';
import { api } from '../../api/client';
import { hopscopeQuery } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner } from '../../scenes/panels';
import { testIds } from '../../testIds';
import { describeCondition, EXAMPLE_RULE, validateRuleText, type RuleProblem } from '../../transforms/alertRules';

interface AlertsState extends SceneObjectState {
  rules?: AlertRule[];
  loadError?: string;
  /** The rule being edited (JSON text) and whether it is new. */
  editing?: { text: string; originalId?: string };
  problems?: RuleProblem[];
  saveError?: string;
  saving?: boolean;
  /** Only this rule's alerts (URL `rule`). */
  rule?: string;
  alerts: SceneObject;
}

const alertsQuery = (rule?: string) => hopscopeQuery('alerts', { ruleId: rule });

export class AlertsScene extends SceneObjectBase<AlertsState> {
  static Component = AlertsRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.alerts] });
  private readonly runner: SceneQueryRunner;

  constructor() {
    const runner = hopscopeRunner(alertsQuery());
    const table = hopscopePanel(
      PanelBuilders.table()
        .setTitle('Alerts (firing and resolved)')
        .setDescription('Click a rule name to open the drill-down at the time the alert fired.')
        .setData(runner)
        .setOption('sortBy', [{ displayName: 'Since', desc: true }])
        .setOption('cellHeight', 'sm' as never),
      { key: 'alerts' }
    );
    super({ alerts: new SceneFlexLayout({ direction: 'column', children: [new SceneFlexItem({ height: 300, body: table })] }) });
    this.runner = runner;
    // The rules do not depend on the time range: read once per visit.
    this.addActivationHandler(() => void this.loadRules());
  }

  public getUrlState(): SceneObjectUrlValues {
    return { rule: this.state.rule };
  }

  public updateFromUrl(values: SceneObjectUrlValues): void {
    if (!('rule' in values)) {
      return;
    }
    const rule = typeof values.rule === 'string' && values.rule ? values.rule : undefined;
    if (rule !== this.state.rule) {
      this.setState({ rule });
      this.runner.setState({ queries: [alertsQuery(rule)] });
      if (this.runner.isActive) {
        this.runner.runQueries();
      }
    }
  }

  private async loadRules(): Promise<void> {
    const res = await api.alertRules();
    this.setState(res.ok ? { rules: res.data.rules, loadError: undefined } : { loadError: `${res.error.code}: ${res.error.message}` });
  }

  public edit(rule?: AlertRule): void {
    const rules = this.state.rules ?? [];
    this.setState({ editing: { text: JSON.stringify(rule ?? { ...EXAMPLE_RULE, id: `rule-${rules.length + 1}` }, null, 2), originalId: rule?.id }, problems: undefined, saveError: undefined });
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
    const rules = this.state.rules ?? [];
    const v = validateRuleText(editing.text, rules.filter((r) => r.id !== editing.originalId).map((r) => r.id));
    if (!v.ok) {
      this.setState({ problems: v.problems });
      return;
    }
    const idx = rules.findIndex((r) => r.id === editing.originalId);
    const next = [...rules];
    if (idx >= 0) {
      next[idx] = v.rule;
    } else {
      next.push(v.rule);
    }
    await this.put(next, true);
  }

  public async toggle(rule: AlertRule, enabled: boolean): Promise<void> {
    await this.put((this.state.rules ?? []).map((r) => (r.id === rule.id ? { ...r, enabled } : r)), false);
  }

  private async put(rules: AlertRule[], closeEditor: boolean): Promise<void> {
    this.setState({ saving: true, saveError: undefined });
    const res = await api.putAlertRules({ rules });
    if (!res.ok) {
      this.setState({ saving: false, saveError: `${res.error.code}: ${res.error.message}` });
      return;
    }
    this.setState({ rules: res.data.rules, saving: false, ...(closeEditor ? { editing: undefined, problems: undefined } : {}) });
  }
}

function RulesTable({ model }: { model: AlertsScene }) {
  const { rules = [], saving } = model.useState();
  const columns = useMemo<Array<Column<AlertRule>>>(
    () => [
      {
        id: 'enabled',
        header: 'On',
        disableGrow: true,
        cell: ({ row }) => (
          <Switch
            value={row.original.enabled}
            disabled={saving}
            onChange={(e) => model.toggle(row.original, e.currentTarget.checked)}
            aria-label={`Enable ${row.original.name}`}
            data-testid={testIds.alerts.ruleToggle(row.original.id)}
          />
        ),
      },
      { id: 'name', header: 'Rule', sortType: 'string' },
      { id: 'when', header: 'When all of', cell: ({ row }) => `${row.original.conditions.map(describeCondition).join(' AND ')} within ${row.original.withinMs / 1000} s` },
      { id: 'severity', header: 'Severity', sortType: 'string' },
      {
        id: 'edit',
        header: '',
        disableGrow: true,
        cell: ({ row }) => (
          <Button size="sm" variant="secondary" fill="text" icon="pen" onClick={() => model.edit(row.original)} data-testid={testIds.alerts.ruleEdit(row.original.id)}>
            Edit
          </Button>
        ),
      },
    ],
    [model, saving]
  );
  return (
    <div data-testid={testIds.alerts.rules}>
      <InteractiveTable columns={columns} data={rules} getRowId={(r) => r.id} />
    </div>
  );
}

function AlertsRenderer({ model }: SceneComponentProps<AlertsScene>) {
  const { rules, loadError, editing, problems, saveError, saving, alerts } = model.useState();
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.page}>
      {saveError && !editing && (
        <AlertBox severity="error" title="Could not save the rules">
          {saveError}
        </AlertBox>
      )}
      <section className={styles.rules} aria-label="Composite rules">
        <div className={styles.header}>
          <h3 className={styles.title}>Composite rules</h3>
          <Button size="sm" icon="plus" onClick={() => model.edit()} data-testid={testIds.alerts.newRule}>
            New rule
          </Button>
        </div>
        {loadError ? (
          <AlertBox severity="error" title="The rules could not load">
            {loadError}
          </AlertBox>
        ) : rules === undefined ? (
          <p className={styles.help}>Loading…</p>
        ) : rules.length === 0 ? (
          <p className={styles.help}>No rule yet: create one (the example joins slow TLS handshakes and a GPU allocation failure).</p>
        ) : (
          <RulesTable model={model} />
        )}
      </section>
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
      <alerts.Component model={alerts} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  rules: css({ padding: theme.spacing(1), border: `1px solid ${theme.colors.border.weak}`, borderRadius: theme.shape.radius.default, background: theme.colors.background.primary }),
  header: css({ display: 'flex', justifyContent: 'space-between', alignItems: 'center', marginBottom: theme.spacing(1) }),
  title: css({ ...theme.typography.h5, margin: 0 }),
  editor: css({ padding: theme.spacing(2), border: `1px solid ${theme.colors.border.medium}`, borderRadius: theme.shape.radius.default, background: theme.colors.background.secondary }),
  help: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  code: css({ fontFamily: theme.typography.fontFamilyMonospace }),
  buttons: css({ display: 'flex', gap: theme.spacing(1), marginTop: theme.spacing(1) }),
});
