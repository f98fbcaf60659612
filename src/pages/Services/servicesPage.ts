import type { SceneAppPage } from '@grafana/scenes';

import { PagePlaceholder } from '../../components/PagePlaceholder/PagePlaceholder';
import { ROUTES } from '../../constants';
import { makePage } from '../makePage';

/** Services of the chain, drilling down to pods and their kernel evidence. */
export function servicesPage(): SceneAppPage {
  return makePage({
    route: ROUTES.Services,
    title: 'Services',
    subTitle: 'Every hop of the chain, its pods, and the kernel evidence behind a slow pod.',
    body: () =>
      new PagePlaceholder({
        page: ROUTES.Services,
        description: 'The services of the chain with their latency and errors will be listed here; clicking one opens its pods, and a pod opens its eBPF evidence.',
      }),
  });
}
