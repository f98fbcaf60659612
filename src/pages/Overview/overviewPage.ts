import type { SceneAppPage } from '@grafana/scenes';

import { PagePlaceholder } from '../../components/PagePlaceholder/PagePlaceholder';
import { ROUTES } from '../../constants';
import { makePage } from '../makePage';

/** The golden metrics of the AI chain on one shared time range. */
export function overviewPage(): SceneAppPage {
  return makePage({
    route: ROUTES.Overview,
    title: 'Overview',
    subTitle: 'Golden metrics of the AI chain: RPS, tokens/s, P99 latency, TTFT, KV-cache hits, errors and GPU activity.',
    body: () =>
      new PagePlaceholder({
        page: ROUTES.Overview,
        description: 'The golden metrics (RPS, output tokens/s, end-to-end and TTFT P99, KV-cache hit rate, error rate) and the GPU SM-activity heatmap will be here, linked on one time range.',
      }),
  });
}
