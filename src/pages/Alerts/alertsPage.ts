import type { SceneAppPage } from '@grafana/scenes';

import { alertsViewPage } from '../../features/alerts/alertsPage';

/** The Alerts view (issue 6): its scenes, drill-downs and URL state live in src/features/alerts/. */
export function alertsPage(): SceneAppPage {
  return alertsViewPage();
}
