import type { SceneAppPage } from '@grafana/scenes';

import { overviewViewPage } from '../../features/overview/overviewPage';

/** The Overview view (issue 6): its scenes, drill-downs and URL state live in src/features/overview/. */
export function overviewPage(): SceneAppPage {
  return overviewViewPage();
}
