/**
 * Every panel's menu (Grafana's panel menu, as traces-drilldown builds it): Inspect (data, query, frame JSON) and,
 * where the panel's data comes from PromQL the proxy ran (or a trace), Explore opening it on the user's own
 * Prometheus (the page's Prometheus variable, by default the one chosen on the config page) or Tempo; and, where
 * Grafana exposes the components (PanelActions), "Add to dashboard" and "Create alert rule" with that PromQL. Items
 * are worked out when the menu opens, from the data the panel shows then.
 */
import type { IconName, PanelMenuItem } from '@grafana/data';
import { config, locationService } from '@grafana/runtime';
import { VizPanel, VizPanelMenu, sceneGraph } from '@grafana/scenes';

import { APP_PLUGIN_ID } from '../../contract/app-urls';
import { variableFilter } from '../datasource/variables';
import { getAppSettings } from '../settings';
import { exploreUrl, PROMETHEUS_VARIABLE, promqlOf } from './explore';
import { INSPECT_KEYS, type InspectTab } from './inspectKeys';
import { dashboardPanelOf, isPanelActionAvailable, PanelActions, type PanelActionKind } from './PanelActions';

// No members of its own: a VizPanelMenu subclass with extra members is not assignable to VizPanel's `menu`.
export class PanelMenu extends VizPanelMenu {
  /** @param options.traceId offer Explore on Tempo for this trace (the trace panels). */
  constructor(options: { traceId?: string } = {}) {
    super({});
    // A menu renders (activates) when opened: its items come from the panel's data at that moment.
    this.addActivationHandler(() =>
      this.setItems(this.parent instanceof VizPanel ? menuItems(this.parent, options.traceId) : [])
    );
  }
}

function menuItems(panel: VizPanel, traceId: string | undefined): PanelMenuItem[] {
  const inspect = (tab: InspectTab) => () =>
    locationService.partial({ [INSPECT_KEYS.panel]: panel.state.key, [INSPECT_KEYS.tab]: tab });
  const items: PanelMenuItem[] = [
    {
      text: 'Inspect',
      iconClassName: 'info-circle',
      shortcut: 'i',
      onClick: inspect('data'),
      subMenu: [
        { text: 'Data', onClick: inspect('data') },
        { text: 'Query', onClick: inspect('query') },
        { text: 'DataFrame JSON', onClick: inspect('json') },
      ],
    },
  ];
  const explore = exploreItem(panel, traceId);
  if (explore) {
    items.push({ text: 'Navigation', type: 'group' }, explore);
  }
  const actions = actionItems(panel);
  if (actions.length) {
    items.push({ text: 'Actions', type: 'group' }, ...actions);
  }
  return items;
}

/** The user's Prometheus: the page's Prometheus variable, else the config page's choice. */
function prometheusUid(panel: VizPanel): string | undefined {
  return variableFilter(panel, PROMETHEUS_VARIABLE) ?? getAppSettings().prometheusDatasourceUid;
}

/** Add to dashboard / Create alert rule, for a panel with PromQL, when this Grafana exposes the component. */
function actionItems(panel: VizPanel): PanelMenuItem[] {
  const uid = prometheusUid(panel);
  const actions = PanelActions.of(panel);
  const dashboardPanel = uid
    ? dashboardPanelOf(panel, sceneGraph.getData(panel).state.data?.series ?? [], { type: 'prometheus', uid })
    : undefined;
  if (!actions || !dashboardPanel) {
    return [];
  }
  const item = (kind: PanelActionKind, text: string, iconClassName: IconName): PanelMenuItem[] =>
    isPanelActionAvailable(kind)
      ? [
          {
            text,
            iconClassName,
            onClick: () => actions.open(kind, dashboardPanel, sceneGraph.getTimeRange(panel).state.value),
          },
        ]
      : [];
  return [
    ...item('add-to-dashboard', 'Add to dashboard', 'apps'),
    ...item('create-alert', 'Create alert rule', 'bell'),
  ];
}

/** Explore on the configured data source: the panel's PromQL, or its trace; a pointer to the config page when unset. */
function exploreItem(panel: VizPanel, traceId: string | undefined): PanelMenuItem | undefined {
  const settings = getAppSettings();
  const raw = sceneGraph.getTimeRange(panel).state.value.raw;
  const range = { from: String(raw.from.valueOf()), to: String(raw.to.valueOf()) };
  const appSubUrl = config.appSubUrl ?? '';
  const notConfigured = (what: string): PanelMenuItem => ({
    text: `Explore: choose your ${what} data source on the config page`,
    iconClassName: 'compass',
    href: `${appSubUrl}/plugins/${APP_PLUGIN_ID}`,
  });
  if (traceId) {
    const uid = settings.tempoDatasourceUid;
    return uid
      ? {
          text: 'Explore',
          iconClassName: 'compass',
          href: exploreUrl(appSubUrl, { datasource: { uid, type: 'tempo' }, queries: [traceId], range }),
        }
      : notConfigured('Tempo');
  }
  const queries = promqlOf(sceneGraph.getData(panel).state.data?.series ?? []);
  if (!queries.length) {
    return undefined;
  }
  const uid = prometheusUid(panel);
  return uid
    ? {
        text: 'Explore',
        iconClassName: 'compass',
        href: exploreUrl(appSubUrl, { datasource: { uid, type: 'prometheus' }, queries, range }),
      }
    : notConfigured('Prometheus');
}
