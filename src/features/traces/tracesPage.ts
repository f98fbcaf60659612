import type { SceneAppPage } from '@grafana/scenes';

import { appLinks, appPaths } from '../../../contract/app-urls';
import { withRunSelector } from '../runs/runSelector';
import { makeViewPage } from '../shared/page';
import { TraceScene } from './TraceScene';
import { TraceSearchScene } from './TraceSearchScene';

/** `traces` (search) → `traces/:traceId` (root cause), each with the run selector (a run pins the range to its window). */
export function tracesPage(): SceneAppPage {
  return makeViewPage({
    name: 'traces',
    url: appPaths.traces(),
    routePath: 'traces/*',
    title: 'Traces',
    subTitle: 'Search traces, or paste a trace id, and get its ranked root cause.',
    body: withRunSelector(() => new TraceSearchScene()),
    drilldowns: [
      {
        routePath: ':traceId/*',
        getPage: (match, parent) => {
          const traceId = decodeURIComponent((match.params as Record<string, string>).traceId ?? '').toLowerCase();
          return makeViewPage({
            name: 'trace',
            url: appPaths.trace(traceId),
            crumbs: [{ label: 'Traces', href: (s) => appLinks.traces(s) }, { label: traceId }],
            routePath: ':traceId/*',
            title: `Trace ${traceId.slice(0, 16)}…`,
            subTitle: 'Critical path, exclusive time, ranked causes with evidence, and what the kernel saw meanwhile.',
            getParentPage: () => parent,
            variables: false,
            body: withRunSelector(() => new TraceScene(traceId)),
          });
        },
      },
    ],
  });
}
