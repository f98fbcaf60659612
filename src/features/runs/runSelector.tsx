/**
 * A run selector for other pages (the Overview, the traces): a `run` scene variable (URL `var-run`, "None" by default)
 * listing the newest runs; picking one pins the page's time range to that run's window (one history
 * step with the pick), and a link opens the run's page. With `marks`, the runs' starts and ends are annotations on
 * every time series of the page (an annotations layer over the `runs` query). Wrap a page body:
 * `body: withRunSelector(overviewBody, { marks: true })`.
 */
import { css } from '@emotion/css';
import { dateTime, type GrafanaTheme2 } from '@grafana/data';
import {
  CustomVariable,
  dataLayers,
  SceneDataLayerSet,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneVariableSet,
  VariableValueSelectors,
  sceneGraph,
  type SceneComponentProps,
  type SceneObject,
  type SceneObjectState,
} from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import type { RunRecord } from '../../../contract';
import { appLinks } from '../../../contract/app-urls';
import { api } from '../../api/client';
import { runWindow } from '../../datasource/frames/runs';
import { fetchRun } from '../../datasource/kinds/run';
import { HOPSCOPE_DATASOURCE, hopscopeQuery } from '../../datasource/query';
import { testIds } from '../../testIds';
import { AppLink, currentSearch } from '../shared/AppLink';

export const RUN_VARIABLE = 'run';
export const NO_RUN = 'none';

/** The `run` variable: None, then the newest runs (filled by `fillRunOptions`). */
export function runVariable(): CustomVariable {
  return new CustomVariable({
    name: RUN_VARIABLE,
    label: 'Run',
    query: `None : ${NO_RUN}`,
    value: NO_RUN,
    text: 'None',
  });
}

/** The runs' starts and ends as annotations on the page's time series. */
export function runMarksLayer(): SceneDataLayerSet {
  return new SceneDataLayerSet({
    layers: [
      new dataLayers.AnnotationsDataLayer({
        name: 'Load-test runs',
        query: {
          name: 'Load-test runs',
          enable: true,
          iconColor: 'blue',
          datasource: { ...HOPSCOPE_DATASOURCE },
          target: hopscopeQuery('runs', { marks: true, limit: 200 }, 'runMarks'),
        },
      }),
    ],
  });
}

const option = (id: string): string => id.replace(/,/g, '\\,');

/** Fills the variable's options with the newest runs (and keeps the picked one); again when the range changes. */
function fillRunOptions(variable: CustomVariable): () => void {
  let generation = 0;
  const fill = () => {
    const gen = ++generation;
    // The newest runs whatever the range: once a run pins the range, the others must still be there to pick.
    api.runs({ limit: 200 }).then((res) => {
      if (gen !== generation || !res.ok) {
        return;
      }
      const ids = res.data.runs.map((r) => r.runId);
      const current = String(variable.getValue());
      if (current !== NO_RUN && !ids.includes(current)) {
        ids.unshift(current);
      }
      variable.setState({ query: [`None : ${NO_RUN}`, ...ids.map(option)].join(',') });
      variable.validateAndUpdate().subscribe();
    });
  };
  fill();
  const sub = sceneGraph.getTimeRange(variable).subscribeToState((n, p) => {
    if (n.value !== p.value) {
      fill();
    }
  });
  return () => sub.unsubscribe();
}

/**
 * The page's time range := the picked run's window. Not a history step of its own: it completes the pick's step (the
 * variable's), so back returns to the previous run and its window at once.
 */
function pinToRun(variable: CustomVariable): () => void {
  const pin = (run: RunRecord) => {
    const range = sceneGraph.getTimeRange(variable);
    const w = runWindow(run);
    const from = new Date(w.from).toISOString();
    const to = w.to === 'now' ? 'now' : new Date(w.to).toISOString();
    if (range.state.from === from && range.state.to === to) {
      return;
    }
    range.setState({
      from,
      to,
      value: { from: dateTime(w.from), to: w.to === 'now' ? dateTime() : dateTime(w.to), raw: { from, to } },
    });
  };
  const pinTo = (runId: string) => {
    if (runId && runId !== NO_RUN) {
      fetchRun(runId).then((res) => res.ok && variable.isActive && pin(res.data));
    }
  };
  // Opened with a run in the URL but another range: the run's window wins (what the link meant).
  pinTo(String(variable.getValue()));
  const sub = variable.subscribeToState((n, p) => {
    if (n.value !== p.value) {
      pinTo(String(n.value));
    }
  });
  return () => sub.unsubscribe();
}

interface RunSelectorState extends SceneObjectState {
  selectors: VariableValueSelectors;
}

/** The run picker, and a link to the picked run's page over the same window. */
class RunSelector extends SceneObjectBase<RunSelectorState> {
  static Component = RunSelectorRenderer;
}

function RunSelectorRenderer({ model }: SceneComponentProps<RunSelector>) {
  const { selectors } = model.useState();
  const styles = useStyles2(getStyles);
  const variable = sceneGraph.lookupVariable(RUN_VARIABLE, model) as CustomVariable | undefined;
  const { value } = variable?.useState() ?? { value: NO_RUN };
  const runId = String(value);
  return (
    <div className={styles.row} data-testid={testIds.runs.selector}>
      <selectors.Component model={selectors} />
      {runId !== NO_RUN && (
        <AppLink href={appLinks.run(runId, currentSearch())} testId={testIds.runs.selectorLink}>
          Open run {runId}
        </AppLink>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  row: css({
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    gap: theme.spacing(2),
    paddingBottom: theme.spacing(1),
  }),
});

/** A page body with the run selector above it (and, with `marks`, the runs marked on its time series). */
export function withRunSelector(body: () => SceneObject, opts: { marks?: boolean } = {}): () => SceneObject {
  return () => {
    const variable = runVariable();
    return new SceneFlexLayout({
      direction: 'column',
      $variables: new SceneVariableSet({ variables: [variable] }),
      ...(opts.marks ? { $data: runMarksLayer() } : {}),
      $behaviors: [() => fillRunOptions(variable), () => pinToRun(variable)],
      children: [
        new SceneFlexItem({ body: new RunSelector({ selectors: new VariableValueSelectors({}) }) }),
        new SceneFlexItem({ body: body() }),
      ],
    });
  };
}
