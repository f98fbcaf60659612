import {
  EmbeddedScene,
  SceneAppPage,
  SceneFlexItem,
  SceneFlexLayout,
  SceneRefreshPicker,
  SceneTimePicker,
  SceneTimeRange,
  type SceneObject,
} from '@grafana/scenes';

import { PRESERVED_URL_KEYS, prefixRoute } from '../constants';

export interface PageDefinition {
  /** Route segment under the app, e.g. `overview`. */
  route: string;
  title: string;
  subTitle: string;
  /** The page body: one scene object (a layout, a panel, a React object). Built once per visit. */
  body: () => SceneObject;
  /** Default time range of the page, Grafana-style relative times. */
  from?: string;
  to?: string;
}

/**
 * One app page: its own URL-synced time range (`from`/`to` in the query string), a time picker and refresh picker in
 * the page header, and the body filling the page. Pages of later issues pass their own `body` (and may add `tabs`
 * or `drilldowns` to the returned SceneAppPage).
 */
export function makePage(def: PageDefinition): SceneAppPage {
  const url = prefixRoute(def.route);
  return new SceneAppPage({
    title: def.title,
    subTitle: def.subTitle,
    url,
    routePath: `${def.route}/*`,
    preserveUrlKeys: PRESERVED_URL_KEYS,
    $timeRange: new SceneTimeRange({ from: def.from ?? 'now-1h', to: def.to ?? 'now' }),
    controls: [new SceneTimePicker({ isOnCanvas: false }), new SceneRefreshPicker({ isOnCanvas: false })],
    getScene: () =>
      new EmbeddedScene({
        body: new SceneFlexLayout({
          direction: 'column',
          children: [new SceneFlexItem({ body: def.body() })],
        }),
      }),
  });
}
