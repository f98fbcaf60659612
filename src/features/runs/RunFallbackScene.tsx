/**
 * Fall-back consistency on the run page (issue 21): when some answers came from another model than the one asked for
 * (the light model after a GPU OOM), the figure in one sentence ("the fall-back path completes 61 % of agent tasks (11
 * of 18) vs 92 % (46 of 50) on the primary path"), each path's served answers and graded completion (a table), and the
 * fall-back share over the run (a time series), both VizPanels over `runFallback`. Nothing when nothing fell back.
 */
import { css } from '@emotion/css';
import type { GrafanaTheme2 } from '@grafana/data';
import {
  PanelBuilders,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  type SceneComponentProps,
  type SceneObjectState,
} from '@grafana/scenes';
import { useStyles2 } from '@grafana/ui';
import React from 'react';

import { fallbackSentence } from '../../../contract';
import { hopscopeQuery, partRefId } from '../../datasource/query';
import { hopscopePanel, hopscopeRunner, partOf } from '../../scenes/panels';
import { testIds } from '../../testIds';
import { followRunRecord } from './followRunRecord';

const FALLBACK = 'fallback';

interface RunFallbackState extends SceneObjectState {
  runId: string;
  sentence?: string | null;
  body?: SceneFlexLayout;
}

function fallbackBody(runId: string): SceneFlexLayout {
  const paths = PanelBuilders.table()
    .setTitle('Answers per model path')
    .setDescription(
      "Every answer of the run on the path of the model that served it (the response model the chain reported: the one asked for is the primary path, another one the fall-back), with its graded answers: agent tasks the agent completed (the prompt's expected task) and mean recall against the prompt's expected documents. Counted by hopscope-load from every request, not sampled."
    )
    .setData(partOf(partRefId(FALLBACK, 'paths')))
    .setOption('cellHeight', 'sm' as never);
  const rate = PanelBuilders.timeseries()
    .setTitle('Fall-back share over the run')
    .setDescription(
      'Of the answers served in each time bucket (by send time), the share the fall-back path served; the tooltip gives the counts, failed requests included (they reached no path).'
    )
    .setData(partOf(partRefId(FALLBACK, 'rate')))
    .setUnit('percentunit')
    .setMin(0)
    .setMax(1)
    .setCustomFieldConfig('lineInterpolation', 'stepAfter' as never)
    .setCustomFieldConfig('fillOpacity', 12)
    .setCustomFieldConfig('spanNulls', false)
    .setOption('legend', { showLegend: true, displayMode: 'list' as never, placement: 'bottom', calcs: [] })
    .setOption('tooltip', { mode: 'multi' as never, sort: 'none' as never });
  return new SceneFlexLayout({
    direction: 'row',
    height: 240,
    $data: hopscopeRunner(hopscopeQuery('runFallback', { runId }, FALLBACK)),
    children: [
      new SceneFlexItem({ width: '55%', body: hopscopePanel(paths, { key: 'run-fallback-paths' }) }),
      new SceneFlexItem({ body: hopscopePanel(rate, { key: 'run-fallback-rate' }) }),
    ],
  });
}

export class RunFallbackScene extends SceneObjectBase<RunFallbackState> {
  static Component = RunFallbackRenderer;

  constructor(state: RunFallbackState) {
    super(state);
    followRunRecord(
      this,
      () => this.state.runId,
      (res) => {
        if (!res.ok) {
          return;
        }
        const sentence = fallbackSentence(res.data.summary?.fallback);
        this.setState({
          sentence,
          body: sentence !== null ? (this.state.body ?? fallbackBody(this.state.runId)) : undefined,
        });
      }
    );
  }
}

function RunFallbackRenderer({ model }: SceneComponentProps<RunFallbackScene>) {
  const { sentence, body } = model.useState();
  const styles = useStyles2(getStyles);
  if (!sentence) {
    return null;
  }
  return (
    <div className={styles.box} data-testid={testIds.runs.fallback}>
      <p className={styles.sentence}>{sentence.charAt(0).toUpperCase() + sentence.slice(1)}</p>
      {body && (
        <div className={styles.panels}>
          <body.Component model={body} />
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), paddingBottom: theme.spacing(1) }),
  sentence: css({
    margin: 0,
    padding: theme.spacing(1, 1.5),
    borderLeft: `3px solid ${theme.colors.warning.border}`,
    background: theme.colors.background.secondary,
    color: theme.colors.text.primary,
  }),
  panels: css({ height: 240, display: 'flex' }),
});
