/**
 * Alerts: the composite rules (RulesEditor: list, enable/disable, create and edit, export and import), the
 * firing/resolved alerts and the range's transitions as table panels on the data source, each linking to the
 * drill-down the proxy anchored it to. An alert link without a pod opens this page on its rule (`?rule=<id>`): only
 * that rule's alerts.
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
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import { partRefId } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { ALERTS_REF, alertsQuery } from './alertsQuery';
import { RulesEditor } from './RulesEditor';

interface AlertsState extends SceneObjectState {
  /** Only this rule's alerts (URL `rule`). */
  rule?: string;
  rules: RulesEditor;
  alerts: SceneObject;
}

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
        .setData(partOf(ALERTS_REF))
        .setOption('sortBy', [{ displayName: 'Since', desc: true }])
        .setOption('cellHeight', 'sm' as never),
      { key: 'alerts' }
    );
    const history = hopscopePanel(
      PanelBuilders.table()
        .setTitle('History: alerts that fired or resolved in the range')
        .setDescription(
          'Every transition the evaluator recorded, newest first. Click a rule name to open its drill-down.'
        )
        .setData(partOf(partRefId(ALERTS_REF, 'history')))
        .setOption('sortBy', [{ displayName: 'At', desc: true }])
        .setOption('cellHeight', 'sm' as never),
      { key: 'alert-history' }
    );
    super({
      rules: new RulesEditor({ data: runner.getRef() }),
      alerts: new SceneFlexLayout({
        direction: 'column',
        $data: runner,
        children: [new SceneFlexItem({ height: 300, body: table }), new SceneFlexItem({ height: 300, body: history })],
      }),
    });
    this.runner = runner;
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
}

function AlertsRenderer({ model }: SceneComponentProps<AlertsScene>) {
  const { rules, alerts } = model.useState();
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.page}>
      <rules.Component model={rules} />
      <alerts.Component model={alerts} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
});
