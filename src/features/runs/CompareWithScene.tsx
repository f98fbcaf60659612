/**
 * "Compare with…": pick another run (of the same scenario by default, any scenario on request) and see which hop
 * regressed — the hops ranked by the root-cause engine over both runs' traces with their evidence, the per-hop own-time
 * deltas (a bar per hop), and the client's figures side by side. URL state `compareWith=<runId>`, so a comparison is a
 * link; every panel is a VizPanel over the `runCompare` query.
 */
import { css } from '@emotion/css';
import { dateTimeFormat, type GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectUrlSyncConfig,
  type SceneComponentProps,
  type SceneObjectState,
  type SceneObjectUrlValues,
  type SceneQueryRunner,
} from '@grafana/scenes';
import { Button, Checkbox, Combobox, type ComboboxOption, Field, useStyles2 } from '@grafana/ui';
import React from 'react';

import type { RunListItem } from '../../../contract';
import { VIEW_URL_KEYS } from '../../../contract/app-urls';
import { api } from '../../api/client';
import { fetchRun } from '../../datasource/kinds/run';
import { hopscopeQuery, partRefId } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { testIds } from '../../testIds';

const COMPARE = 'compare';

interface CompareWithState extends SceneObjectState {
  runId: string;
  compareWith?: string;
  /** List runs of every scenario, not only this run's. */
  anyScenario: boolean;
  scenario?: string;
  baselineRunId?: string | null;
  runs?: RunListItem[];
  body: SceneFlexLayout;
}

function compareBody(runId: string): SceneFlexLayout {
  const t = (title: string, refId: string, key: string, description: string) =>
    new SceneFlexItem({
      body: hopscopePanel(
        PanelBuilders.table()
          .setTitle(title)
          .setDescription(description)
          .setData(partOf(refId))
          .setOption('cellHeight', 'sm' as never),
        { key }
      ),
    });
  return new SceneFlexLayout({
    direction: 'column',
    $data: hopscopeRunner(hopscopeQuery('runCompare', { runId }, COMPARE)),
    children: [
      new SceneFlexLayout({
        direction: 'row',
        height: 300,
        children: [
          t(
            'Which hop regressed',
            COMPARE,
            'run-compare-ranked',
            "The hops ranked by the root-cause engine over this run's traces, with the other run's traces as the baseline; each with its evidence."
          ),
        ],
      }),
      new SceneFlexLayout({
        direction: 'row',
        height: 300,
        children: [
          t(
            'Own time per hop: this run vs the other',
            partRefId(COMPARE, 'hops'),
            'run-compare-hops',
            'Exclusive time of each hop (service and operation) in both runs, P50 and P99, the largest slow-down first; the bar is the P50 change.'
          ),
          t(
            'Client figures side by side',
            partRefId(COMPARE, 'client'),
            'run-compare-client',
            'What the client measured in each run (from the two run records: every request counted).'
          ),
        ],
      }),
    ],
  });
}

export class CompareWithScene extends SceneObjectBase<CompareWithState> {
  static Component = CompareWithRenderer;
  protected override _urlSync = new SceneObjectUrlSyncConfig(this, { keys: [...VIEW_URL_KEYS.run] });

  constructor(state: { runId: string; compareWith?: string }) {
    super({ anyScenario: false, ...state, body: compareBody(state.runId) });
    this.addActivationHandler(() => {
      this.loadRuns();
    });
  }

  public getUrlState(): SceneObjectUrlValues {
    return { compareWith: this.state.compareWith };
  }

  public updateFromUrl(values: SceneObjectUrlValues): void {
    const next = typeof values.compareWith === 'string' && values.compareWith ? values.compareWith : undefined;
    if (next !== this.state.compareWith) {
      this.setCompareWith(next);
    }
  }

  public setCompareWith(compareWith: string | undefined): void {
    this.setState({ compareWith });
    const runner = this.state.body.state.$data as SceneQueryRunner;
    runner.setState({
      queries: [hopscopeQuery('runCompare', { runId: this.state.runId, baselineRunId: compareWith }, COMPARE)],
    });
    if (compareWith && runner.isActive) {
      runner.runQueries();
    }
  }

  /** A person's pick: one browser history step (back returns to the previous comparison). */
  public pick(compareWith: string | undefined): void {
    this._urlSync.performBrowserHistoryAction?.(() => this.setCompareWith(compareWith));
  }

  public setAnyScenario(anyScenario: boolean): void {
    this.setState({ anyScenario });
    this.loadRuns();
  }

  /** The runs to pick from: this run's scenario (or every scenario), newest first, this run left out. */
  private async loadRuns(): Promise<void> {
    const rec = await fetchRun(this.state.runId);
    const scenario = rec.ok ? rec.data.scenario : undefined;
    const list = await api.runs({ scenario: this.state.anyScenario ? undefined : scenario, limit: 200 });
    if (!this.isActive) {
      return;
    }
    this.setState({
      scenario,
      baselineRunId: rec.ok ? rec.data.baselineRunId : undefined,
      runs: list.ok ? list.data.runs.filter((r) => r.runId !== this.state.runId) : [],
    });
  }
}

function CompareWithRenderer({ model }: SceneComponentProps<CompareWithScene>) {
  const { compareWith, anyScenario, runs, scenario, baselineRunId, body } = model.useState();
  const styles = useStyles2(getStyles);
  const options: Array<ComboboxOption<string>> = (runs ?? []).map((r) => ({
    value: r.runId,
    label: r.runId,
    description: `${r.scenario} · ${r.status} · ${dateTimeFormat(r.startMs, { format: 'YYYY-MM-DD HH:mm:ss' })}${r.runId === baselineRunId ? " · the gate's baseline" : ''}`,
  }));
  // A run given by the URL that the list does not hold (another scenario, or older) is still shown as picked.
  if (compareWith && !options.some((o) => o.value === compareWith)) {
    options.unshift({ value: compareWith, label: compareWith });
  }
  return (
    <div className={styles.section}>
      <div className={styles.controls}>
        <Field
          label="Compare with…"
          description={anyScenario || !scenario ? 'Runs of every scenario' : `Runs of ${scenario}`}
          className={styles.field}
        >
          <Combobox
            options={options}
            value={compareWith ?? null}
            onChange={(o) => model.pick(o?.value)}
            placeholder={runs === undefined ? 'Loading runs…' : options.length ? 'Pick a run' : 'No other run'}
            width={48}
            data-testid={testIds.runs.compareWith}
          />
        </Field>
        <Checkbox
          label="Any scenario"
          value={anyScenario}
          onChange={(e) => model.setAnyScenario(e.currentTarget.checked)}
          data-testid={testIds.runs.anyScenario}
        />
        {compareWith && (
          <Button
            variant="secondary"
            size="sm"
            icon="times"
            onClick={() => model.pick(undefined)}
            data-testid={testIds.runs.compareClear}
          >
            Clear
          </Button>
        )}
      </div>
      {compareWith && <body.Component model={body} />}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  section: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), paddingTop: theme.spacing(2) }),
  controls: css({ display: 'flex', alignItems: 'flex-end', gap: theme.spacing(2) }),
  field: css({ marginBottom: 0 }),
});
