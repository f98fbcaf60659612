import type { SceneAppPage } from '@grafana/scenes';

import { servicesViewPage } from '../../features/services/servicesPage';

/** The Services view (issue 6): its scenes, drill-downs and URL state live in src/features/services/. */
export function servicesPage(): SceneAppPage {
  return servicesViewPage();
}
