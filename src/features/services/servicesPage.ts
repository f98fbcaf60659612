import type { SceneAppPage, SceneAppPageLike, SceneRouteMatch } from '@grafana/scenes';

import { appLinks, appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { podBody, serviceBody, servicesBody } from './servicesScenes';

const param = (m: SceneRouteMatch<Record<string, string>>, k: string): string => decodeURIComponent(m.params[k] ?? '');

/** `services` → `services/:service` → `services/:service/pods/:pod`, with breadcrumbs and shared URL keys. */
export function servicesPage(): SceneAppPage {
  return makeViewPage({
    name: 'services',
    url: appPaths.services(),
    routePath: 'services/*',
    title: 'Services',
    subTitle: 'Every service of the chain: click one, then a pod, to see what the kernel saw.',
    crumbs: [{ label: 'Services' }],
    body: servicesBody,
    drilldowns: [
      {
        routePath: ':service/*',
        getPage: (match, parent) => servicePage(param(match, 'service'), parent),
      },
    ],
  });
}

function servicePage(service: string, parent: SceneAppPageLike): SceneAppPage {
  const page: SceneAppPage = makeViewPage({
    name: 'service',
    url: appPaths.service(service),
    routePath: ':service/*',
    title: service,
    subTitle: 'Pods of this service and its slowest traces.',
    crumbs: [{ label: 'Services', href: (s) => appLinks.services(s) }, { label: service }],
    getParentPage: () => parent,
    body: () => serviceBody(service),
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
    name: 'pod',
    url: appPaths.pod(service, pod),
    routePath: 'pods/:pod/*',
    title: pod,
    subTitle: `Kernel evidence of ${pod} (${service}) and the slowest traces.`,
    crumbs: [
      { label: 'Services', href: (s) => appLinks.services(s) },
      { label: service, href: (s) => appLinks.service(service, s) },
      { label: pod },
    ],
    getParentPage: () => parent,
    body: () => podBody(service, pod),
  });
}
