import type { SceneAppPage } from '@grafana/scenes';

import { tracesViewPage } from '../../features/traces/tracesPage';

/** The Traces view (issue 6): its scenes, drill-downs and URL state live in src/features/traces/. */
export function tracesPage(): SceneAppPage {
  return tracesViewPage();
}
