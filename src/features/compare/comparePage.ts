import type { SceneAppPage } from '@grafana/scenes';

import { appUrl, makeViewPage } from '../shared/page';
import { CompareScene } from './CompareScene';

export function compareViewPage(): SceneAppPage {
  return makeViewPage({
    url: appUrl('compare'),
    routePath: 'compare/*',
    title: 'Compare',
    subTitle: 'A/B: inference backend × model version — distributions, P50/P99/TTFT, jitter hot zones.',
    variables: false,
    body: () => new CompareScene(),
  });
}
