import type { SceneAppPage } from '@grafana/scenes';

import { appLinks, appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { ExplainScene } from './ExplainScene';

/** `explain?from&to`: the window root cause of a range (brushed on the Overview or a run's page), shareable by its link. */
export function explainPage(): SceneAppPage {
  return makeViewPage({
    name: 'explain',
    url: appPaths.explain(),
    routePath: 'explain/*',
    crumbs: [{ label: 'Overview', href: (s) => appLinks.overview(s) }, { label: 'Explain this window' }],
    title: 'Explain this window',
    subTitle:
      "Why this range's requests were slow: its traces ranked against the hour before, down to the engine's phases and the kernel.",
    variables: false,
    body: () => new ExplainScene(),
  });
}
