/**
 * "Add to dashboard" and "Create alert rule" from a panel's menu, through the components Grafana exposes to plugins
 * (`grafana/add-to-dashboard-form/v1`, `grafana/alerting/create-alert-from-panel/v1`; plugin.json declares both in
 * `dependencies.extensions.exposedComponents`). One per page, next to the inspector: it asks Grafana for both
 * components (the menu offers an action only when Grafana has its component) and renders the one a menu item opened,
 * here rather than in the menu, which closes on the click.
 *
 * What they get is the panel as a dashboard would hold it: its PromQL on the user's Prometheus data source (the
 * runtime data source the app's panels use exists only inside the app), the panel type, title, units and options.
 */
import type { DataFrame, TimeRange } from '@grafana/data';
import { usePluginComponent } from '@grafana/runtime';
import {
  SceneObjectBase,
  VizPanel,
  sceneGraph,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
} from '@grafana/scenes';
import type { DataQuery, DataSourceRef, Panel } from '@grafana/schema';
import { Modal } from '@grafana/ui';
import React, { useEffect } from 'react';

import { promqlOf } from './explore';

export const ADD_TO_DASHBOARD_FORM = 'grafana/add-to-dashboard-form/v1';
export const CREATE_ALERT_FROM_PANEL = 'grafana/alerting/create-alert-from-panel/v1';

export type PanelActionKind = 'add-to-dashboard' | 'create-alert';

/** The props of Grafana's AddToDashboardFormExposedComponent (the form inside the caller's modal). */
interface AddToDashboardFormProps {
  onClose: () => void;
  buildPanel: () => Panel;
  timeRange?: TimeRange;
  options?: { useAbsolutePath: boolean };
}

/** The props of Grafana's CreateAlertFromPanelExposedComponent (a modal of its own). */
interface CreateAlertFromPanelProps {
  panel: { title?: string; targets: DataQuery[]; datasource?: DataSourceRef; maxDataPoints?: number };
  range?: { raw: TimeRange['raw'] };
  onDismiss: () => void;
}

/** Which exposed components this Grafana has, as the page's PanelActions last saw them. */
const available: Record<PanelActionKind, boolean> = { 'add-to-dashboard': false, 'create-alert': false };

export function isPanelActionAvailable(kind: PanelActionKind): boolean {
  return available[kind];
}

/** The panels Grafana's core draws: anything else (the app's runtime panels) is added as a time series. */
const CORE_PANELS = new Set([
  'timeseries',
  'stat',
  'table',
  'heatmap',
  'histogram',
  'state-timeline',
  'bargauge',
  'gauge',
]);

/**
 * The panel as a dashboard panel on the user's Prometheus: one target per PromQL expression its frames were computed
 * from. Undefined when it shows no PromQL (a trace, kernel events), which then has nothing to add or alert on.
 */
export function dashboardPanelOf(panel: VizPanel, frames: DataFrame[], prometheus: DataSourceRef): Panel | undefined {
  const exprs = promqlOf(frames);
  if (!exprs.length) {
    return undefined;
  }
  const { pluginId, title, description, fieldConfig, options } = panel.state;
  return {
    type: CORE_PANELS.has(pluginId) ? pluginId : 'timeseries',
    title,
    description,
    datasource: prometheus,
    targets: exprs.map((expr, i) => ({
      refId: String.fromCharCode(65 + (i % 26)) + (i >= 26 ? String(Math.floor(i / 26)) : ''),
      datasource: prometheus,
      expr,
    })),
    // The app's field config names fields its own frames carry; units, decimals and thresholds carry over.
    fieldConfig: { defaults: { ...fieldConfig.defaults, links: [] }, overrides: [] },
    options: options as Record<string, unknown>,
  } as Panel;
}

interface PanelActionsState extends SceneObjectState {
  open?: { kind: PanelActionKind; panel: Panel; range: TimeRange };
}

export class PanelActions extends SceneObjectBase<PanelActionsState> {
  static Component = PanelActionsRenderer;

  constructor() {
    super({});
  }

  /** Opens Grafana's component for a panel (the panel menu's items). */
  open(kind: PanelActionKind, panel: Panel, range: TimeRange): void {
    this.setState({ open: { kind, panel, range } });
  }

  close = (): void => {
    this.setState({ open: undefined });
  };

  /** The page's PanelActions, from any object of the page. */
  static of(obj: SceneObject): PanelActions | undefined {
    return sceneGraph.findObject(obj, (o) => o instanceof PanelActions) as PanelActions | undefined;
  }
}

function PanelActionsRenderer({ model }: SceneComponentProps<PanelActions>) {
  const { open } = model.useState();
  const addToDashboard = usePluginComponent<AddToDashboardFormProps>(ADD_TO_DASHBOARD_FORM);
  const createAlert = usePluginComponent<CreateAlertFromPanelProps>(CREATE_ALERT_FROM_PANEL);
  const AddToDashboardForm = addToDashboard.component;
  const CreateAlert = createAlert.component;
  useEffect(() => {
    available['add-to-dashboard'] = !addToDashboard.isLoading && Boolean(AddToDashboardForm);
    available['create-alert'] = !createAlert.isLoading && Boolean(CreateAlert);
  }, [addToDashboard.isLoading, AddToDashboardForm, createAlert.isLoading, CreateAlert]);

  if (open?.kind === 'add-to-dashboard' && AddToDashboardForm) {
    return (
      <Modal title="Add panel to dashboard" isOpen onDismiss={model.close}>
        <AddToDashboardForm
          onClose={model.close}
          buildPanel={() => open.panel}
          timeRange={open.range}
          options={{ useAbsolutePath: true }}
        />
      </Modal>
    );
  }
  if (open?.kind === 'create-alert' && CreateAlert) {
    const { title, targets = [], datasource, maxDataPoints } = open.panel;
    return (
      <CreateAlert
        panel={{ title, targets: targets as unknown as DataQuery[], datasource, maxDataPoints }}
        range={{ raw: open.range.raw }}
        onDismiss={model.close}
      />
    );
  }
  return null;
}
