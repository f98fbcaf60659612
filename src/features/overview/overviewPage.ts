import type { SceneAppPage } from '@grafana/scenes';

import { appPaths } from '../../../contract/app-urls';
import { withRunSelector } from '../runs/runSelector';
import { makeViewPage } from '../shared/page';
import { overviewBody } from './overviewScene';

/** `/a/hopscope-rca-app/overview`: the golden metrics and the GPU heatmap. */
export function overviewPage(): SceneAppPage {
  return makeViewPage({
    name: 'overview',
    url: appPaths.overview(),
    routePath: 'overview/*',
    title: 'Overview',
    subTitle:
      'Golden metrics of the AI chain, linked on one time range: hover one chart to see the same instant in all, drag to zoom.',
    // A load-test run picker (pins the range to its window) and every run's start … end marked on the charts.
    body: withRunSelector(overviewBody, { marks: true }),
    faults: true,
  });
}
