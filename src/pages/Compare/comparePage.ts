import type { SceneAppPage } from '@grafana/scenes';

import { PagePlaceholder } from '../../components/PagePlaceholder/PagePlaceholder';
import { ROUTES } from '../../constants';
import { makePage } from '../makePage';

/** A/B comparison: model version × inference backend. */
export function comparePage(): SceneAppPage {
  return makePage({
    route: ROUTES.Compare,
    title: 'Compare',
    subTitle: 'Compare model versions and inference backends (vLLM vs TGI) side by side.',
    body: () =>
      new PagePlaceholder({
        page: ROUTES.Compare,
        description: 'A/B statistics (latency distributions, P99, jitter hot zones) for two selections of model and backend will be here.',
      }),
  });
}
