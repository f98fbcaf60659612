/**
 * One view page of the app: URL-synced time range, refresh, the backend/model/service variables (backend a fixed
 * list; model and service filled from what exists in the window, by the variable values data source) and the
 * Prometheus data source variable (the user's Prometheus: where "Explore" opens a panel's PromQL), and the export
 * button in the header; its panels share one crosshair (Scenes' CursorSync), may show the injected faults as
 * annotations (Scenes' annotations layer over the data source), and open in the panel inspector (`?inspect=`).
 * Every page keeps `APP_URL_KEYS` when the user drills down, so a pasted link opens the same view.
 */
import { DashboardCursorSync, VariableRefresh, VariableSort } from '@grafana/schema';
import {
  behaviors,
  CustomVariable,
  DataSourceVariable,
  dataLayers,
  EmbeddedScene,
  SceneAppPage,
  SceneFlexItem,
  SceneFlexLayout,
  SceneDataLayerSet,
  SceneRefreshPicker,
  SceneTimePicker,
  SceneTimeRange,
  SceneVariableSet,
  QueryVariable,
  VariableValueSelectors,
  type SceneAppDrilldownView,
  type SceneAppPageLike,
  type SceneObject,
} from '@grafana/scenes';

import { APP_URL_KEYS } from '../../../contract/app-urls';
import { BACKENDS } from '../../constants';
import { HOPSCOPE_DATASOURCE, hopscopeQuery } from '../../datasource/query';
import { VARIABLE_VALUES_DATASOURCE, type VariableValuesQuery } from '../../datasource/variables';
import { InspectDrawer } from '../../scenes/InspectDrawer';
import { PanelActions } from '../../scenes/PanelActions';
import { PROMETHEUS_VARIABLE } from '../../scenes/explore';
import { getAppSettings } from '../../settings';
import { ExportButton } from '../export/ExportButton';
import { PageContainer, type Crumb } from './PageContainer';

export interface ViewPageDefinition {
  /** The page's name (its container test id: `testIds.page.container(name)`); default: the last segment of `url`. */
  name?: string;
  /** The drill-down trail above the page's panels. */
  crumbs?: Crumb[];
  /** URL of the page (absolute app path, e.g. `/a/hopscope-rca-app/services/rag`). */
  url: string;
  /** Route pattern relative to the parent (`services/*`, `:service/*`). */
  routePath: string;
  title: string;
  subTitle?: string;
  body: () => SceneObject;
  drilldowns?: SceneAppDrilldownView[];
  getParentPage?: () => SceneAppPageLike;
  /** Show the backend/model/service variables (views whose data they filter). */
  variables?: boolean;
  /** Mark the faults injected in the range on every time series (the chain's fault API, through the proxy). */
  faults?: boolean;
  from?: string;
  to?: string;
}

/** A variable whose values are what exists in the page's window (values data source), All meaning no filter. */
function valuesVariable(name: string, label: string, query: VariableValuesQuery): QueryVariable {
  return new QueryVariable({
    name,
    label,
    datasource: { ...VARIABLE_VALUES_DATASOURCE },
    query,
    includeAll: true,
    defaultToAll: true,
    value: '$__all',
    text: 'All',
    sort: VariableSort.alphabeticalAsc,
    // Filled when the page opens, not again on every refresh: the panels wait for a variable that is loading.
    refresh: VariableRefresh.onDashboardLoad,
  });
}

function appVariables(): SceneVariableSet {
  return new SceneVariableSet({
    variables: [
      new CustomVariable({
        name: 'backend',
        label: 'Backend',
        query: BACKENDS.join(','),
        includeAll: true,
        defaultToAll: true,
        value: '$__all',
        text: 'All',
      }),
      valuesVariable('model', 'Model', 'models'),
      valuesVariable('service', 'Service', 'services'),
      // The user's Prometheus data sources; the one chosen on the config page first.
      new DataSourceVariable({
        name: PROMETHEUS_VARIABLE,
        label: 'Prometheus',
        pluginId: 'prometheus',
        value: getAppSettings().prometheusDatasourceUid ?? '',
      }),
    ],
  });
}

export function makeViewPage(def: ViewPageDefinition): SceneAppPage {
  return new SceneAppPage({
    title: def.title,
    subTitle: def.subTitle,
    url: def.url,
    routePath: def.routePath,
    preserveUrlKeys: [...APP_URL_KEYS],
    getParentPage: def.getParentPage,
    drilldowns: def.drilldowns,
    getScene: () =>
      new EmbeddedScene({
        $timeRange: new SceneTimeRange({ from: def.from ?? 'now-1h', to: def.to ?? 'now' }),
        $variables: appVariables(),
        controls: [
          ...(def.variables === false ? [] : [new VariableValueSelectors({})]),
          new SceneTimePicker({ isOnCanvas: true }),
          new SceneRefreshPicker({ isOnCanvas: true, intervals: ['10s', '30s', '1m', '5m'] }),
          new ExportButton(),
        ],
        $behaviors: [new behaviors.CursorSync({ sync: DashboardCursorSync.Crosshair })],
        ...(def.faults ? { $data: faultAnnotations() } : {}),
        body: new SceneFlexLayout({
          direction: 'column',
          children: [
            new SceneFlexItem({
              body: new PageContainer({
                name: def.name ?? def.url.split('/').pop()!,
                crumbs: def.crumbs,
                body: def.body(),
              }),
            }),
            new SceneFlexItem({ body: new InspectDrawer() }),
            new SceneFlexItem({ body: new PanelActions() }),
          ],
        }),
      }),
  });
}

/** The faults of the range as annotations on every panel of the page (Grafana's annotations layer). */
function faultAnnotations(): SceneDataLayerSet {
  return new SceneDataLayerSet({
    layers: [
      new dataLayers.AnnotationsDataLayer({
        name: 'Faults',
        query: {
          name: 'Faults',
          enable: true,
          iconColor: 'orange',
          datasource: { ...HOPSCOPE_DATASOURCE },
          target: hopscopeQuery('annotations', {}, 'faults'),
        },
      }),
    ],
  });
}
