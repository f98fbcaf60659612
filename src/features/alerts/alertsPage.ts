import type { SceneAppPage } from '@grafana/scenes';

import { appUrl, makeViewPage } from '../shared/page';
import { AlertsScene } from './AlertsScene';

export function alertsViewPage(): SceneAppPage {
  return makeViewPage({
    url: appUrl('alerts'),
    routePath: 'alerts/*',
    title: 'Alerts',
    subTitle: 'Composite rules across metrics and kernel events, and the alerts they raised, each linked to its drill-down.',
    variables: false,
    body: () => new AlertsScene(),
  });
}
