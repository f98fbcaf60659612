import type { SceneAppPage } from '@grafana/scenes';

import { compareViewPage } from '../../features/compare/comparePage';

/** The Compare view (issue 6): its scenes, drill-downs and URL state live in src/features/compare/. */
export function comparePage(): SceneAppPage {
  return compareViewPage();
}
