import type { SceneAppPage } from '@grafana/scenes';

import { PagePlaceholder } from '../../components/PagePlaceholder/PagePlaceholder';
import { ROUTES } from '../../constants';
import { makePage } from '../makePage';

/** Slow and failed traces, each with its ranked root cause. */
export function tracesPage(): SceneAppPage {
  return makePage({
    route: ROUTES.Traces,
    title: 'Traces',
    subTitle: 'Find slow or failed requests and see which hop caused them, and why.',
    body: () =>
      new PagePlaceholder({
        page: ROUTES.Traces,
        description: 'Slow and timed-out traces will be listed here; opening one shows its critical path and the ranked root cause with evidence.',
      }),
  });
}
