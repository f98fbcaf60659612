/**
 * Runs: every load-test run overlapping the page's time range, one table (Grafana's table panel): scenario, start,
 * duration, target and achieved rate, client TTFT P99, end-to-end P99, goodput, errors and the verdict, each run one
 * click from its page. The filters are scene variables (`var-scenario`, `var-status` in the URL); while any run is
 * running the list re-runs every few seconds (the load generator's heartbeat period), so it updates live.
 */
import {
  CustomVariable,
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneVariableSet,
  type SceneObject,
  type SceneQueryRunner,
} from '@grafana/scenes';

import { RUN_STATUSES } from '../../datasource/frames/runs';
import { hopscopeQuery } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner } from '../../scenes/panels';
import { markWhenDrawn } from '../../scenes/whenDrawn';
import { liveWhileRunning } from './live';
import { RunsFilters } from './RunsFilters';

/** Set once the Runs page's table shows its answer (read by bench/app-runs.bench.ts). */
export const RUNS_READY_MARK = 'hopscope:runs:ready';

/** The scenarios seen in the list's answers so far, plus the one the URL asks for, as the scenario filter's options. */
function fillScenarios(variable: CustomVariable, runner: SceneQueryRunner): () => void {
  const seen = new Set<string>();
  const sub = runner.subscribeToState(({ data }) => {
    const f = data?.series.find((s) => s.fields.some((x) => x.name === 'scenario'));
    const values = (f?.fields.find((x) => x.name === 'scenario')?.values ?? []) as string[];
    const current = String(variable.getValue() ?? '');
    const before = seen.size;
    for (const v of [...values, ...(variable.hasAllValue() ? [] : [current])]) {
      if (v) {
        seen.add(v);
      }
    }
    if (seen.size !== before) {
      variable.setState({ query: [...seen].sort().map(escapeOption).join(',') });
      variable.validateAndUpdate().subscribe();
    }
  });
  return () => sub.unsubscribe();
}

/** CustomVariable options are comma-separated: a comma inside a name is escaped as Grafana does. */
const escapeOption = (s: string): string => s.replace(/,/g, '\\,');

function runsTable(runner: SceneQueryRunner) {
  const builder = PanelBuilders.table()
    .setTitle('Load-test runs')
    .setDescription(
      'Every run of hopscope-load recorded by the proxy that overlaps the time range, newest first. Figures are what the client measured; a running run shows its live heartbeat figures. Click a run to open it over its own window.'
    )
    .setData(runner)
    .setOption('cellHeight', 'sm' as never);
  return hopscopePanel(builder, { key: 'runs' });
}

export function runsBody(): SceneObject {
  const scenario = new CustomVariable({
    name: 'scenario',
    label: 'Scenario',
    query: '',
    includeAll: true,
    defaultToAll: true,
    value: '$__all',
    text: 'All',
  });
  const status = new CustomVariable({
    name: 'status',
    label: 'Verdict',
    query: RUN_STATUSES.join(','),
    includeAll: true,
    defaultToAll: true,
    value: '$__all',
    text: 'All',
  });
  const runner = hopscopeRunner(hopscopeQuery('runs', { scenario: '$scenario', status: '$status' }));
  const layout = new SceneFlexLayout({
    direction: 'column',
    $variables: new SceneVariableSet({ variables: [scenario, status] }),
    $behaviors: [
      markWhenDrawn(RUNS_READY_MARK),
      liveWhileRunning(runner, (d) => Number(d.series[0]?.meta?.custom?.running ?? 0) > 0),
    ],
    children: [
      new SceneFlexItem({ body: new RunsFilters() }),
      new SceneFlexItem({ height: 640, body: runsTable(runner) }),
    ],
  });
  layout.addActivationHandler(() => fillScenarios(scenario, runner));
  return layout;
}
