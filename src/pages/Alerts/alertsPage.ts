import type { SceneAppPage } from '@grafana/scenes';

import { PagePlaceholder } from '../../components/PagePlaceholder/PagePlaceholder';
import { ROUTES } from '../../constants';
import { makePage } from '../makePage';

/** Composite alert rules and their firing alerts. */
export function alertsPage(): SceneAppPage {
  return makePage({
    route: ROUTES.Alerts,
    title: 'Alerts',
    subTitle: 'Composite alerts across metrics, traces and kernel events, each linked to its drill-down.',
    body: () =>
      new PagePlaceholder({
        page: ROUTES.Alerts,
        description: 'Composite alert rules and the alerts they fired, each anchored to the right drill-down link, will be here.',
      }),
  });
}
