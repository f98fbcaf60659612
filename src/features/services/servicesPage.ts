import type { SceneAppPage, SceneAppPageLike, SceneRouteMatch } from '@grafana/scenes';

import { appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { PodScene, ServiceScene, ServicesListScene } from './ServicesScene';

const param = (m: SceneRouteMatch<Record<string, string>>, k: string): string => decodeURIComponent(m.params[k] ?? '');

/** `services` → `services/:service` → `services/:service/pods/:pod`, with breadcrumbs and shared URL keys. */
export function servicesPage(): SceneAppPage {
  return makeViewPage({
    url: appPaths.services(),
    routePath: 'services/*',
    title: 'Services',
    subTitle: 'Every service of the chain: click one, then a pod, to see what the kernel saw.',
    body: () => new ServicesListScene(),
    drilldowns: [
      {
        routePath: ':service/*',
        getPage: (match, parent) => servicePage(param(match, 'service'), parent),
      },
    ],
  });
}

function servicePage(service: string, parent: SceneAppPageLike): SceneAppPage {
  const url = appPaths.service(service);
  const page: SceneAppPage = makeViewPage({
    url,
    routePath: ':service/*',
    title: service,
    subTitle: 'Pods of this service and its slowest traces.',
    getParentPage: () => parent,
    body: () => new ServiceScene(service),
    drilldowns: [
      {
        routePath: 'pods/:pod/*',
        getPage: (match) => podPage(service, param(match, 'pod'), page),
      },
    ],
  });
  return page;
}

function podPage(service: string, pod: string, parent: SceneAppPageLike): SceneAppPage {
  return makeViewPage({
    url: appPaths.pod(service, pod),
    routePath: 'pods/:pod/*',
    title: pod,
    subTitle: `Kernel evidence of ${pod} (${service}) and the slowest traces.`,
    getParentPage: () => parent,
    body: () => new PodScene(service, pod),
  });
}
