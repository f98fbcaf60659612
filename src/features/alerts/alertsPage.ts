import type { SceneAppPage } from '@grafana/scenes';

import { appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { AlertsScene } from './AlertsScene';

export function alertsPage(): SceneAppPage {
  return makeViewPage({
    name: 'alerts',
    url: appPaths.alerts(),
    routePath: 'alerts/*',
    title: 'Alerts',
    subTitle:
      'Composite rules across metrics and kernel events, and the alerts they raised, each linked to its drill-down.',
    variables: false,
    body: () => new AlertsScene(),
  });
}
