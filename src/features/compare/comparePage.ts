import type { SceneAppPage } from '@grafana/scenes';

import { appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { CompareScene } from './CompareScene';

export function comparePage(): SceneAppPage {
  return makeViewPage({
    name: 'compare',
    url: appPaths.compare(),
    routePath: 'compare/*',
    title: 'Compare',
    subTitle: 'A/B: inference backend × model version — distributions, P50/P99/TTFT, jitter hot zones.',
    variables: false,
    body: () => new CompareScene(),
  });
}
