import type { SceneAppPage } from '@grafana/scenes';

import { appUrl, makeViewPage } from '../shared/page';
import { TraceScene, TraceSearchScene } from './TracesScene';

/** `traces` (search) → `traces/:traceId` (root cause). */
export function tracesViewPage(): SceneAppPage {
  return makeViewPage({
    url: appUrl('traces'),
    routePath: 'traces/*',
    title: 'Traces',
    subTitle: 'Search traces, or paste a trace id, and get its ranked root cause.',
    body: () => new TraceSearchScene(),
    drilldowns: [
      {
        routePath: ':traceId/*',
        getPage: (match, parent) => {
          const traceId = decodeURIComponent((match.params as Record<string, string>).traceId ?? '').toLowerCase();
          return makeViewPage({
            url: appUrl(`traces/${traceId}`),
            routePath: ':traceId/*',
            title: `Trace ${traceId.slice(0, 16)}…`,
            subTitle: 'Critical path, exclusive time, ranked causes with evidence, and what the kernel saw meanwhile.',
            getParentPage: () => parent,
            variables: false,
            body: () => new TraceScene(traceId),
          });
        },
      },
    ],
  });
}
