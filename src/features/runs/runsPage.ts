import type { SceneAppPage } from '@grafana/scenes';
import { locationService } from '@grafana/runtime';

import { appPaths } from '../../../contract/app-urls';
import { makeViewPage } from '../shared/page';
import { runBody } from './RunScene';
import { runsBody } from './RunsScene';

/** `runs` (the load-test runs) → `runs/:runId` (one run over its own window). */
export function runsPage(): SceneAppPage {
  return makeViewPage({
    url: appPaths.runs(),
    routePath: 'runs/*',
    title: 'Runs',
    subTitle:
      'Load-test runs of hopscope-load: what the client measured, the verdicts, and a page per run over its own window.',
    body: runsBody,
    variables: false,
    from: 'now-7d',
    drilldowns: [
      {
        routePath: ':runId/*',
        getPage: (match, parent) => {
          const runId = decodeURIComponent((match.params as Record<string, string>).runId ?? '');
          // A link without a time range (pasted, or from outside): the page pins itself to the run's window.
          const pinWindow = !new URLSearchParams(locationService.getLocation().search).has('from');
          return makeViewPage({
            url: appPaths.run(runId),
            routePath: ':runId/*',
            title: `Run ${runId}`,
            subTitle:
              "Golden metrics and client vs server TTFT over the run's window, its verdicts and faults, the slowest and failed requests one click from their root cause, and what changed against another run.",
            getParentPage: () => parent,
            variables: false,
            body: () => runBody(runId, pinWindow),
          });
        },
      },
    ],
  });
}
